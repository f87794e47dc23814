import type { OrderStatus } from './order-status';

/**
 * The one event every transport delivers. `seq` is per order, starts at 1 and increases
 * by exactly 1; `publishedAtUs` is epoch microseconds taken at publish time.
 */
export interface OrderStatusChanged {
  readonly orderId: string;
  readonly seq: number;
  readonly status: OrderStatus;
  readonly publishedAtUs: number;
  /** Filler for payload-size experiments; absent when empty. */
  readonly padding?: string;
}

export interface OrderSnapshot {
  readonly orderId: string;
  readonly status: OrderStatus;
  /** Seq of the last published event (every order has at least its `created` event). */
  readonly lastSeq: number;
  readonly updatedAtUs: number;
  /**
   * The customer the order belongs to (set when it is created); only that customer and
   * holders of `orders:read:any` may read it. Absent on snapshots rebuilt from events
   * (resets), which only the order's authorized readers receive anyway.
   */
  readonly ownerId?: string;
}

export enum ResetReason {
  /** The requested resume point is older than what is retained. */
  BeyondRetention = 'beyond_retention',
  /** The requested resume point is ahead of the last published seq. */
  AheadOfLastSeq = 'ahead_of_last_seq',
  /** Events were lost upstream (e.g. the event store lost its history). */
  Gap = 'gap',
  /**
   * The subscriber's queue overflowed and was too small to hold a `skipped` marker next
   * to the newest event (a capacity of 1 or 2): the snapshot carries the newest state.
   */
  Overflow = 'overflow',
}

/**
 * Sent instead of events when a resume point cannot be served without a gap: the client
 * replaces its view with `snapshot` and continues from `snapshot.lastSeq`.
 */
export interface StreamReset {
  readonly reason: ResetReason;
  readonly snapshot: OrderSnapshot;
}

export enum SkipReason {
  /** The subscriber read too slowly: its bounded queue dropped or conflated these events. */
  Overflow = 'overflow',
}

/**
 * Sent in place of events the service dropped for this subscriber: the seqs
 * `fromSeq..toSeq` (inclusive) happened but are not delivered. The client's cursor moves
 * to `toSeq` (resuming after `toSeq` loses nothing more); a client that needs them can
 * resume from `fromSeq - 1` on a new stream while they are still retained.
 */
export interface StreamSkipped {
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly reason: SkipReason;
}

/** What a subscriber receives, in order. */
export type StreamItem =
  | { readonly kind: 'event'; readonly event: OrderStatusChanged }
  | { readonly kind: 'reset'; readonly reset: StreamReset }
  | { readonly kind: 'skipped'; readonly skipped: StreamSkipped };

/**
 * The client's cursor after it has received `item`: the seq to resume after. Every
 * transport's resume point (SSE `id:`, long-poll `next`, gRPC `resume-after-seq`) is this.
 */
export function cursorAfter(item: StreamItem): number {
  switch (item.kind) {
    case 'event':
      return item.event.seq;
    case 'reset':
      return item.reset.snapshot.lastSeq;
    case 'skipped':
      return item.skipped.toSeq;
  }
}

/** Why the service ended a stream; clients resume on everything but `completed`. */
export enum StreamEndReason {
  /** The order reached a terminal status; nothing more will come. */
  Completed = 'completed',
  /** The subscriber fell too far behind under the `disconnect` overflow policy. */
  Overflow = 'overflow',
  /** The stream reached its maximum age (lets load balancers rebalance). */
  MaxAge = 'max_age',
  /** The service is shutting down. */
  Shutdown = 'shutdown',
  /**
   * The caller's token expired: resume with a fresh token from the last seq seen. Not a
   * network failure: retrying with the same token fails with `unauthenticated`.
   */
  TokenExpired = 'token_expired',
}

/** Epoch microseconds with sub-millisecond resolution, comparable across processes on one host. */
export function nowUs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}
