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
  /** Pub/sub channel every instance listens on. */
  readonly channel: string;
}

export function redisKeys(prefix: string): RedisKeys {
  if (/[{}\s]/.test(prefix)) {
    throw new TypeError(`key prefix ${JSON.stringify(prefix)} must not contain braces or spaces`);
  }
  return {
    order: (orderId) => `${prefix}:{${orderId}}:order`,
    history: (orderId) => `${prefix}:{${orderId}}:history`,
    epoch: `${prefix}:epoch`,
    channel: `${prefix}:events`,
  };
}
