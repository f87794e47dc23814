/** draft-ietf-httpapi-idempotency-key-header; Node lower-cases incoming header names. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** Marks an answer replayed from an earlier request with the same key (Stripe's name). */
export const REPLAYED_HEADER = 'idempotent-replayed';
