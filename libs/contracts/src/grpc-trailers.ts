/**
 * Trailing metadata of a gRPC Subscribe call the service ended on purpose (any end
 * reason but `completed`), so a client acts on it without parsing the status details,
 * which are for humans. The status code still says what kind of end it is:
 * UNAVAILABLE (resume at once) or UNAUTHENTICATED (`token_expired`: get a new token).
 * gRPC reserves `grpc-` keys; these are ours.
 */
export const StreamEndTrailer = {
  /** A StreamEndReason value: `max_age`, `shutdown`, `overflow`, `token_expired`. */
  Reason: 'stream-end-reason',
  /** Resubscribe with `after_seq` set to this: the last seq the call delivered. */
  ResumeAfterSeq: 'resume-after-seq',
  /** Wait this many ms before resubscribing (graceful shutdown spreads reconnects). */
  RetryAfterMs: 'retry-after-ms',
} as const;
