import type { Routing } from './channels';

/** What the scenario tells a simulated instance when it starts (JSON in its environment). */
export interface InstanceConfig {
  readonly routing: Routing;
  /** A single Redis, or ... */
  readonly redisUrl?: string;
  /** ... Redis Cluster seed nodes (`host:port`): sharded pub/sub, as the store uses there. */
  readonly clusterNodes?: readonly string[];
  /** Orders that exist (the publisher spreads events over all of them). */
  readonly orders: number;
  /** Orders the instance's local subscribers follow at any time. */
  readonly follow: number;
  /** Followed orders replaced per second (a subscriber leaves, another arrives). */
  readonly churnPerSec: number;
}

export const INSTANCE_CONFIG_ENV = 'ROUTING_INSTANCE_CONFIG';

/** Parent -> instance. */
export type InstanceCommand =
  { readonly type: 'follow' } | { readonly type: 'go' } | { readonly type: 'stop' };

/** Instance -> parent. */
export type InstanceMessage =
  | { readonly type: 'connected' }
  | { readonly type: 'followed'; readonly channels: number }
  | { readonly type: 'going' }
  | ({ readonly type: 'stopped' } & InstanceCounts)
  | { readonly type: 'failed'; readonly error: string };

/** Between `go` and `stop`. */
export interface InstanceCounts {
  /** Messages the instance received from Redis. */
  readonly ingested: number;
  /** ... of which for an order it follows (what its subscribers need). */
  readonly needed: number;
  /** The whole process's CPU time (user + system), ms. */
  readonly cpuMs: number;
  /** Channels subscribed and unsubscribed because subscribers came and went. */
  readonly subscribes: number;
  readonly unsubscribes: number;
  /** Channels subscribed at the end. */
  readonly channels: number;
  /** Subscribe or unsubscribe commands Redis refused (or that timed out). */
  readonly commandErrors: number;
}
