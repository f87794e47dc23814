import { randomBytes } from 'node:crypto';
import { ErrorCode, GatewayError } from '@app/contracts';
import type { Principal } from './principal';

/** @default 30_000 ms: long enough to open an EventSource, short enough to be useless if leaked */
export const DEFAULT_TICKET_TTL_MS = 30_000;
/** @default 32 unredeemed tickets per subject (a client needs one per stream it opens) */
export const DEFAULT_MAX_TICKETS_PER_SUBJECT = 32;
/** @default 100_000 unredeemed tickets in all: bounds memory whatever clients do */
export const DEFAULT_MAX_TICKETS = 100_000;

export interface StreamTicketOptions {
  /** @default 30_000 */
  ttlMs?: number;
  /** @default 32 */
  maxPerSubject?: number;
  /** @default 100_000 */
  maxTickets?: number;
  /** Clock, for tests. @default Date.now */
  now?: () => number;
}

export interface IssuedTicket {
  readonly ticket: string;
  readonly expiresAtMs: number;
}

interface TicketEntry {
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
 * In-process: with several instances behind a balancer, a ticket works on the instance
 * that issued it (use sticky routing for the two requests, or the cookie).
 */
export class StreamTicketStore {
  readonly ttlMs: number;
  private readonly maxPerSubject: number;
  private readonly maxTickets: number;
  private readonly now: () => number;
  private readonly tickets = new Map<string, TicketEntry>();
  private readonly perSubject = new Map<string, number>();

  constructor(opts: StreamTicketOptions = {}) {
    this.ttlMs = opts.ttlMs ?? DEFAULT_TICKET_TTL_MS;
    this.maxPerSubject = opts.maxPerSubject ?? DEFAULT_MAX_TICKETS_PER_SUBJECT;
    this.maxTickets = opts.maxTickets ?? DEFAULT_MAX_TICKETS;
    this.now = opts.now ?? Date.now;
    if (!(this.ttlMs > 0)) throw new TypeError('ttlMs must be > 0');
  }

  get size(): number {
    return this.tickets.size;
  }

  /**
   * Issues a ticket for `orderId` (the caller has already been authorized to read it).
   * @throws GatewayError ResourceExhausted when the subject (or everyone) holds too many.
   */
  issue(principal: Principal, orderId: string): IssuedTicket {
    this.sweep();
    if ((this.perSubject.get(principal.subject) ?? 0) >= this.maxPerSubject) {
      throw new GatewayError(
        ErrorCode.ResourceExhausted,
        `at most ${this.maxPerSubject} unused stream tickets per principal`,
      );
    }
    if (this.tickets.size >= this.maxTickets) {
      throw new GatewayError(ErrorCode.ResourceExhausted, 'too many unused stream tickets');
    }
    const ticket = randomBytes(32).toString('base64url');
    const expiresAtMs = Math.min(this.now() + this.ttlMs, principal.expiresAtMs);
    this.tickets.set(ticket, { principal, orderId, expiresAtMs });
    this.count(principal.subject, 1);
    return { ticket, expiresAtMs };
  }

  /**
   * Spends a ticket: the principal it was issued to. A ticket is gone after its first
   * presentation, whatever the outcome, so a leaked URL cannot be replayed.
   * @throws GatewayError Unauthenticated when unknown, used, expired or for another order.
   */
  redeem(ticket: string, orderId: string): Principal {
    const entry = this.tickets.get(ticket);
    if (entry === undefined) {
      throw new GatewayError(ErrorCode.Unauthenticated, 'stream ticket unknown, used or expired');
    }
    this.remove(ticket, entry);
    if (entry.expiresAtMs <= this.now()) {
      throw new GatewayError(ErrorCode.Unauthenticated, 'stream ticket unknown, used or expired');
    }
    if (entry.orderId !== orderId) {
      throw new GatewayError(
        ErrorCode.Unauthenticated,
        'stream ticket was issued for another order',
      );
    }
    return entry.principal;
  }

  /** Forgets expired tickets; cheap enough to run on every issue. */
  sweep(): void {
    const now = this.now();
    for (const [ticket, entry] of this.tickets) {
      if (entry.expiresAtMs <= now) this.remove(ticket, entry);
    }
  }

  clear(): void {
    this.tickets.clear();
    this.perSubject.clear();
  }

  private remove(ticket: string, entry: TicketEntry): void {
    if (this.tickets.delete(ticket)) this.count(entry.principal.subject, -1);
  }

  private count(subject: string, by: number): void {
    const n = (this.perSubject.get(subject) ?? 0) + by;
    if (n <= 0) this.perSubject.delete(subject);
    else this.perSubject.set(subject, n);
  }
}
