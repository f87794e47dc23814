/**
 * The engine's own parts of every stream, whatever the domain: why a resume starts with a
 * reset, why events were skipped, why a stream ended, and the clock events are stamped with.
 */

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
