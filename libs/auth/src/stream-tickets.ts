import { randomBytes } from 'node:crypto';
import {
  ByteBudget,
  ErrorCode,
  GatewayError,
  stringBytes,
  valueBytes,
  type MemoryBounded,
  type MemoryUse,
} from '@app/contracts';
import type { Principal } from './principal';

/** @default 30_000 ms: long enough to open an EventSource, short enough to be useless if leaked */
export const DEFAULT_TICKET_TTL_MS = 30_000;
/** @default 32 unredeemed tickets per subject (a client needs one per stream it opens) */
export const DEFAULT_MAX_TICKETS_PER_SUBJECT = 32;
/**
 * @default 8_388_608 bytes (8 MiB) of unredeemed tickets in one process: about 20,000 of
 * the largest (a 128-character subject, a 64-character order id), whatever clients do.
 */
export const DEFAULT_TICKETS_MAX_BYTES = 8 * 1024 * 1024;
/**
 * What the store keeps per ticket besides its strings and principal: two Map slots, the
 * entry object, the expiry (measured in stream-tickets.spec.ts).
 */
export const TICKET_ENTRY_OVERHEAD_BYTES = 184;
/** The `structure` label of the in-process ticket store in `order_memory_*`. */
export const TICKETS_STRUCTURE = 'stream_tickets';
/** Random bytes in a ticket: 256 bits, base64url (43 characters). */
const TICKET_BYTES = 32;
const TICKET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface StreamTicketOptions {
  /** @default 30_000 */
  ttlMs?: number;
  /** @default 32 */
  maxPerSubject?: number;
  /**
   * Estimated bytes of unredeemed tickets (`ticketEntryBytes`); beyond it `issue` is
   * refused until tickets are redeemed or expire. @default DEFAULT_TICKETS_MAX_BYTES
   */
  maxBytes?: number;
  /** Clock, for tests. @default Date.now */
  now?: () => number;
}

export interface IssuedTicket {
  readonly ticket: string;
  readonly expiresAtMs: number;
}

/** What a ticket stands for, wherever it is kept. */
export interface TicketEntry {
  readonly principal: Principal;
  readonly orderId: string;
  readonly expiresAtMs: number;
}

/**
 * Short-lived, single-use credentials for one order's stream, for EventSource, which
 * cannot send an Authorization header: a client with a token asks for a ticket
 * (`POST /v1/stream-tickets`) and opens `...stream?ticket=`. A URL ends up in logs and
 * browser history, so what it carries must be worthless soon: a ticket works once, for one
 * order, within `ttlMs`, and never outlives the token it was issued for (the stream still
 * ends at the token's expiry).
 *
 * The DI token and the contract; `InMemoryStreamTicketStore` keeps tickets in the
 * process (one instance), the Redis one (`@app/redis-store`) in Redis, so a ticket issued
 * by one instance is redeemed, once, by whichever instance the balancer picks.
 */
export abstract class StreamTicketStore {
  abstract readonly ttlMs: number;

  /**
   * Issues a ticket for `orderId` (the caller has already been authorized to read it).
   * @throws GatewayError ResourceExhausted when the subject (or everyone) holds too many,
   *   Unavailable when the shared store cannot be reached.
   */
  abstract issue(principal: Principal, orderId: string): Promise<IssuedTicket>;

  /**
   * Spends a ticket: the principal it was issued to. A ticket is gone after its first
   * presentation, whatever the outcome, so a leaked URL cannot be replayed.
   * @throws GatewayError Unauthenticated when unknown, used, expired or for another order;
   *   Unavailable when the shared store cannot be reached.
   */
  abstract redeem(ticket: string, orderId: string): Promise<Principal>;

  /** Gives back what the store holds (timers, connections). */
  abstract close(): Promise<void>;
}

/** A fresh ticket: 256 random bits, URL-safe. */
export function newTicket(): string {
  return randomBytes(TICKET_BYTES).toString('base64url');
}

/** Whether `ticket` has the shape `newTicket` makes (checked before any lookup). */
export function isWellFormedTicket(ticket: string): boolean {
  return TICKET_PATTERN.test(ticket);
}

/** When a ticket issued now expires: after `ttlMs`, and never after the token. */
export function ticketExpiry(principal: Principal, ttlMs: number, nowMs: number): number {
  return Math.min(nowMs + ttlMs, principal.expiresAtMs);
}

export function unknownTicket(): GatewayError {
  return new GatewayError(ErrorCode.Unauthenticated, 'stream ticket unknown, used or expired');
}

/**
 * Estimated bytes one unredeemed ticket holds: its strings and its principal (counted
 * per ticket: with one token per ticket, nothing else keeps the principal alive).
 */
export function ticketEntryBytes(ticket: string, entry: TicketEntry): number {
  const { subject, scopes, expiresAtMs } = entry.principal;
  return (
    TICKET_ENTRY_OVERHEAD_BYTES +
    stringBytes(ticket) +
    stringBytes(entry.orderId) +
    valueBytes({ subject, scopes, expiresAtMs })
  );
}

export function tooManyTickets(maxPerSubject: number): GatewayError {
  return new GatewayError(
    ErrorCode.ResourceExhausted,
    `at most ${maxPerSubject} unused stream tickets per principal`,
  );
}

/**
 * The checks every store makes on a ticket it has just taken out (so it is spent already).
 * @throws GatewayError Unauthenticated when expired or issued for another order.
 */
export function checkRedeemed(entry: TicketEntry, orderId: string, nowMs: number): Principal {
  if (entry.expiresAtMs <= nowMs) throw unknownTicket();
  if (entry.orderId !== orderId) {
    throw new GatewayError(ErrorCode.Unauthenticated, 'stream ticket was issued for another order');
  }
  return entry.principal;
}

/**
 * Tickets in this process: with several instances behind a balancer, a ticket works on
 * the instance that issued it only (the service uses the Redis store whenever Redis is
 * configured).
 */
export class InMemoryStreamTicketStore extends StreamTicketStore implements MemoryBounded {
  readonly ttlMs: number;
  private readonly maxPerSubject: number;
  private readonly budget: ByteBudget;
  private readonly now: () => number;
  /** In issue order, which is expiry order but for tickets cut short by their token. */
  private readonly tickets = new Map<string, TicketEntry>();
  private readonly perSubject = new Map<string, number>();

  constructor(opts: StreamTicketOptions = {}) {
    super();
    this.ttlMs = opts.ttlMs ?? DEFAULT_TICKET_TTL_MS;
    this.maxPerSubject = opts.maxPerSubject ?? DEFAULT_MAX_TICKETS_PER_SUBJECT;
    this.budget = new ByteBudget(TICKETS_STRUCTURE, opts.maxBytes ?? DEFAULT_TICKETS_MAX_BYTES);
    this.now = opts.now ?? Date.now;
    if (!(this.ttlMs > 0)) throw new TypeError('ttlMs must be > 0');
  }

  get size(): number {
    return this.tickets.size;
  }

  get memoryUse(): MemoryUse {
    return this.budget.memoryUse;
  }

  issue(principal: Principal, orderId: string): Promise<IssuedTicket> {
    // An executor that throws rejects: the same contract as the shared stores.
    return new Promise((resolve) => {
      this.sweep();
      if ((this.perSubject.get(principal.subject) ?? 0) >= this.maxPerSubject) {
        throw tooManyTickets(this.maxPerSubject);
      }
      const ticket = newTicket();
      const entry = {
        principal,
        orderId,
        expiresAtMs: ticketExpiry(principal, this.ttlMs, this.now()),
      };
      // A ticket already issued is a promise to the client that holds it: the store
      // refuses new ones rather than forget those.
      if (!this.budget.tryReserve(ticketEntryBytes(ticket, entry))) throw this.full();
      this.tickets.set(ticket, entry);
      this.count(principal.subject, 1);
      const { expiresAtMs } = entry;
      resolve({ ticket, expiresAtMs });
    });
  }

  redeem(ticket: string, orderId: string): Promise<Principal> {
    return new Promise((resolve) => {
      const entry = this.tickets.get(ticket);
      if (entry === undefined) throw unknownTicket();
      this.remove(ticket, entry);
      resolve(checkRedeemed(entry, orderId, this.now()));
    });
  }

  /**
   * Forgets expired tickets from the oldest on, up to the first still valid: amortized
   * O(1) per issue. A ticket cut short by its token's expiry may wait behind a later one
   * for at most `ttlMs`; redeem checks the expiry itself.
   */
  sweep(): void {
    const now = this.now();
    for (const [ticket, entry] of this.tickets) {
      if (entry.expiresAtMs > now) return;
      this.remove(ticket, entry);
    }
  }

  close(): Promise<void> {
    this.tickets.clear();
    this.perSubject.clear();
    this.budget.reset();
    return Promise.resolve();
  }

  private remove(ticket: string, entry: TicketEntry): void {
    if (!this.tickets.delete(ticket)) return;
    this.count(entry.principal.subject, -1);
    this.budget.release(ticketEntryBytes(ticket, entry));
  }

  /** The refusal at the byte bound: retry once the oldest ticket has expired. */
  private full(): GatewayError {
    const oldest = this.tickets.values().next();
    const retryAfterMs = oldest.done ? this.ttlMs : oldest.value.expiresAtMs - this.now();
    return new GatewayError(
      ErrorCode.ResourceExhausted,
      'too many unused stream tickets on this instance; retry later',
      Math.max(1_000, retryAfterMs),
    );
  }

  private count(subject: string, by: number): void {
    const n = (this.perSubject.get(subject) ?? 0) + by;
    if (n <= 0) this.perSubject.delete(subject);
    else this.perSubject.set(subject, n);
  }
}
