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
}

/**
 * Sent instead of events when a resume point cannot be served without a gap: the client
 * replaces its view with `snapshot` and continues from `snapshot.lastSeq`.
 */
export interface StreamReset {
  readonly reason: ResetReason;
  readonly snapshot: OrderSnapshot;
}

/** What a subscriber receives, in order. */
export type StreamItem =
  | { readonly kind: 'event'; readonly event: OrderStatusChanged }
  | { readonly kind: 'reset'; readonly reset: StreamReset };

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
