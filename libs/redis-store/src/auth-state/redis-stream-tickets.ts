import {
  checkRedeemed,
  decodeTicketEntry,
  DEFAULT_MAX_TICKETS_PER_SUBJECT,
  DEFAULT_TICKET_TTL_MS,
  encodeTicketEntry,
  isWellFormedTicket,
  newTicket,
  StreamTicketStore,
  ticketExpiry,
  tooManyTickets,
  unknownTicket,
  type IssuedTicket,
  type Principal,
} from '@app/auth';
import { unavailableOnFailure, type RedisClient } from '../redis-client';
import type { AuthStateKeys } from './auth-state-keys';
import { COUNT_TICKET_SCRIPT, UNCOUNT_TICKET_SCRIPT } from './auth-state-scripts';

export interface RedisStreamTicketOptions {
  /** @default 30_000 */
  readonly ttlMs?: number;
  /** @default 32 */
  readonly maxPerSubject?: number;
}

const WHAT = 'stream tickets';

/**
 * Stream tickets in Redis, so the instance that redeems one need not be the one that
 * issued it (a balancer sends the two requests wherever it likes). A ticket is a key that
 * expires with it; redeeming is GETDEL (Redis >= 6.2), which hands the entry to exactly one
 * caller across every instance, so a ticket still works once. Each subject's unredeemed
 * tickets are counted in a key of their own (bounded like the in-memory store's); Redis
 * memory is bounded by that count times the ticket lifetime, so there is no global cap.
 */
export class RedisStreamTicketStore extends StreamTicketStore {
  readonly ttlMs: number;
  private readonly maxPerSubject: number;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: AuthStateKeys,
    opts: RedisStreamTicketOptions = {},
  ) {
    super();
    this.ttlMs = opts.ttlMs ?? DEFAULT_TICKET_TTL_MS;
    this.maxPerSubject = opts.maxPerSubject ?? DEFAULT_MAX_TICKETS_PER_SUBJECT;
    if (!(this.ttlMs > 0)) throw new TypeError('ttlMs must be > 0');
  }

  async issue(principal: Principal, orderId: string): Promise<IssuedTicket> {
    const now = Date.now();
    const expiresAtMs = ticketExpiry(principal, this.ttlMs, now);
    const ticket = newTicket();
    const countKey = this.keys.ticketCount(principal.subject);
    // Two keys in two slots (a ticket's and its subject's), hence two steps: a count
    // taken for a ticket that then failed to be stored only lingers until it expires.
    const counted = await unavailableOnFailure(WHAT, () =>
      COUNT_TICKET_SCRIPT.run(this.client, [countKey], [this.maxPerSubject, this.ttlMs]),
    );
    if (counted === 0) throw tooManyTickets(this.maxPerSubject);
    const entry = encodeTicketEntry({ principal, orderId, expiresAtMs });
    await unavailableOnFailure(WHAT, () =>
      this.client.set(this.keys.ticket(ticket), entry, 'PX', Math.max(1, expiresAtMs - now)),
    );
    return { ticket, expiresAtMs };
  }

  async redeem(ticket: string, orderId: string): Promise<Principal> {
    // Never a key made of whatever a client put in the URL.
    if (!isWellFormedTicket(ticket)) throw unknownTicket();
    const json = await unavailableOnFailure(WHAT, () =>
      this.client.getdel(this.keys.ticket(ticket)),
    );
    const entry = json === null ? undefined : decodeTicketEntry(json);
    if (entry === undefined) throw unknownTicket();
    // Best effort: a count left behind expires with the subject's newest ticket.
    UNCOUNT_TICKET_SCRIPT.run(
      this.client,
      [this.keys.ticketCount(entry.principal.subject)],
      [],
    ).catch(() => undefined);
    return checkRedeemed(entry, orderId, Date.now());
  }

  /** The Redis connection belongs to the auth state, which closes it. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
