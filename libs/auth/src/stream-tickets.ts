import { randomBytes } from 'node:crypto';
import { ErrorCode, GatewayError } from '@app/contracts';
import type { Principal } from './principal';

/** @default 30_000 ms: long enough to open an EventSource, short enough to be useless if leaked */
export const DEFAULT_TICKET_TTL_MS = 30_000;
/** @default 32 unredeemed tickets per subject (a client needs one per stream it opens) */
export const DEFAULT_MAX_TICKETS_PER_SUBJECT = 32;
/** @default 100_000 unredeemed tickets in all: bounds memory whatever clients do */
export const DEFAULT_MAX_TICKETS = 100_000;
/** Random bytes in a ticket: 256 bits, base64url (43 characters). */
const TICKET_BYTES = 32;
const TICKET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

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
export class InMemoryStreamTicketStore extends StreamTicketStore {
  readonly ttlMs: number;
  private readonly maxPerSubject: number;
  private readonly maxTickets: number;
  private readonly now: () => number;
  private readonly tickets = new Map<string, TicketEntry>();
  private readonly perSubject = new Map<string, number>();

  constructor(opts: StreamTicketOptions = {}) {
    super();
    this.ttlMs = opts.ttlMs ?? DEFAULT_TICKET_TTL_MS;
    this.maxPerSubject = opts.maxPerSubject ?? DEFAULT_MAX_TICKETS_PER_SUBJECT;
    this.maxTickets = opts.maxTickets ?? DEFAULT_MAX_TICKETS;
    this.now = opts.now ?? Date.now;
    if (!(this.ttlMs > 0)) throw new TypeError('ttlMs must be > 0');
  }

  get size(): number {
    return this.tickets.size;
  }

  issue(principal: Principal, orderId: string): Promise<IssuedTicket> {
    // An executor that throws rejects: the same contract as the shared stores.
    return new Promise((resolve) => {
      this.sweep();
      if ((this.perSubject.get(principal.subject) ?? 0) >= this.maxPerSubject) {
        throw tooManyTickets(this.maxPerSubject);
      }
      if (this.tickets.size >= this.maxTickets) {
        throw new GatewayError(ErrorCode.ResourceExhausted, 'too many unused stream tickets');
      }
      const ticket = newTicket();
      const expiresAtMs = ticketExpiry(principal, this.ttlMs, this.now());
      this.tickets.set(ticket, { principal, orderId, expiresAtMs });
      this.count(principal.subject, 1);
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

  /** Forgets expired tickets; cheap enough to run on every issue. */
  sweep(): void {
    const now = this.now();
    for (const [ticket, entry] of this.tickets) {
      if (entry.expiresAtMs <= now) this.remove(ticket, entry);
    }
  }

  close(): Promise<void> {
    this.tickets.clear();
    this.perSubject.clear();
    return Promise.resolve();
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
