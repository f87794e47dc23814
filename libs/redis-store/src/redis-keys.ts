import { createHash } from 'node:crypto';

/**
 * Key and channel names. Every key of one order carries the order id as a hash tag
 * (`{...}`), so the publish script's keys always live in one cluster slot and the same
 * code runs on a single Redis and on Redis Cluster
 * (https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags).
 */
export interface RedisKeys {
  /** Hash: `seq`, `status`, `updatedAtUs` and any extra snapshot attributes. */
  order(orderId: string): string;
  /** List: the order's last events as JSON, oldest first, contiguous in seq. */
  history(orderId: string): string;
  /** String: a random id set once per data set; a new value means the data was lost. */
  readonly epoch: string;
  /**
   * String: the event a publish with this idempotency key made, kept for the window. The
   * key is hashed (SHA-256, base64url), so its name has a fixed length whatever the
   * caller's scoped key holds.
   */
  idempotency(orderId: string, idempotencyKey: string): string;
  /**
   * The order's pub/sub channel: an instance subscribes to the orders it has subscribers
   * for, never to every order. Hash-tagged like the order's keys, so on Redis Cluster the
   * publish script may SPUBLISH to it and sharded pub/sub keeps it on the order's shard.
   */
  channel(orderId: string): string;
}

export function redisKeys(prefix: string): RedisKeys {
  if (/[{}\s]/.test(prefix)) {
    throw new TypeError(`key prefix ${JSON.stringify(prefix)} must not contain braces or spaces`);
  }
  return {
    order: (orderId) => `${prefix}:{${orderId}}:order`,
    history: (orderId) => `${prefix}:{${orderId}}:history`,
    epoch: `${prefix}:epoch`,
    idempotency: (orderId, idempotencyKey) =>
      `${prefix}:{${orderId}}:idem:${createHash('sha256').update(idempotencyKey).digest('base64url')}`,
    channel: (orderId) => `${prefix}:{${orderId}}:events`,
  };
}
