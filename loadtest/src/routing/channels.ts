import { redisKeys } from '@app/redis-store/redis-keys';

/**
 * How events of one order reach the instances that serve it:
 * - `order`: one channel per order, the store's own scheme (`os:{id}:events`); an instance
 *   subscribes to exactly the orders its subscribers follow.
 * - `shard`: a fixed number of channels; an order's events go to the channel its id hashes
 *   to, and an instance subscribes to every shard holding at least one of its orders.
 */
export type RoutingMode = 'order' | 'shard';

export interface Routing {
  readonly mode: RoutingMode;
  /** Shard channels (mode `shard` only). */
  readonly shards: number;
}

const STORE_KEYS = redisKeys('os');

/** The channel an order's events are published on. */
export function channelOf(routing: Routing, orderId: string): string {
  if (routing.mode === 'order') return STORE_KEYS.channel(orderId);
  // Hash-tagged like the store's channels, so on Redis Cluster each shard channel lives
  // in one slot and SPUBLISH keeps it on one master.
  return `os:{shard-${fnv1a(orderId) % routing.shards}}:events`;
}

export function routingName(routing: Routing): string {
  return routing.mode === 'order' ? 'per-order' : `${routing.shards} shards`;
}

/** The simulated order ids: `r0` .. `r<orders-1>`. */
export function orderIdOf(index: number): string {
  return `r${index}`;
}

/** FNV-1a, 32 bits: cheap and well spread over short ids (any uniform hash would do). */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
