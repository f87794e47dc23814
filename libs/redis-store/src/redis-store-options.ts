import type { DomainEvent, DomainSnapshot, StreamDomain } from '@app/contracts';
import { DEFAULT_IDEMPOTENCY_WINDOW_MS } from '@app/store';

/** @default 'os' prefix of every key and channel */
export const DEFAULT_REDIS_KEY_PREFIX = 'os';
/** @default 1_000 events kept per order in Redis for resume on any instance */
export const DEFAULT_REDIS_HISTORY_SIZE = 1_000;
/** @default 1_000 ms before a command to a hung Redis fails (publish then answers 503) */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 1_000;
/**
 * @default 1_000 ms between two PINGs that tell whether Redis still answers (readiness):
 * a frozen Redis is reported down within this plus the command timeout
 */
export const DEFAULT_REDIS_PING_INTERVAL_MS = 1_000;
/** @default 2_000 ms to establish a connection */
export const DEFAULT_REDIS_CONNECT_TIMEOUT_MS = 2_000;
/** @default 1_000 ms longest wait between reconnection attempts */
export const DEFAULT_REDIS_RECONNECT_MAX_DELAY_MS = 1_000;
/**
 * @default 2_000 ms between two reads of the Redis Cluster's slot map. ioredis re-reads the
 * map on MOVED and when a slot move unsubscribes its sharded subscribers, once, from a node
 * picked at random; a node that has not learnt the move yet answers the old map, and
 * without a periodic read (ioredis sets none, whatever its docs say) the moved slot's
 * live events would stay unsubscribed until the next topology change. The store runs this
 * read on its own timer, stopped by close().
 */
export const DEFAULT_REDIS_CLUSTER_SLOTS_REFRESH_MS = 2_000;
/** @default 300_000 ms a delivered/cancelled order stays in Redis (as in the in-memory store) */
export const DEFAULT_REDIS_TERMINAL_RETENTION_MS = 300_000;
/** @default 604_800_000 ms (7 days) an order that stops changing stays in Redis */
export const DEFAULT_REDIS_IDLE_TTL_MS = 604_800_000;

/** Where Redis is: one server (`url`) or a cluster (`clusterNodes`, which wins). */
export interface RedisConnectionOptions {
  /** `redis://[:password@]host:port[/db]` (or `rediss://` for TLS). */
  url?: string;
  /** Cluster seed nodes as `host:port`; when given, ioredis Cluster is used. */
  clusterNodes?: readonly string[];
  /** Prefix of every key and channel. @default 'os' */
  keyPrefix?: string;
  /** Events kept per order for resume. @default 1_000 */
  historySize?: number;
  /** @default 1_000 */
  commandTimeoutMs?: number;
  /** @default 1_000 */
  pingIntervalMs?: number;
  /** @default 2_000 */
  connectTimeoutMs?: number;
  /** @default 1_000 */
  reconnectMaxDelayMs?: number;
  /** Redis Cluster only: how often the slot map is read again. @default 2_000 */
  clusterSlotsRefreshMs?: number;
  /** @default 300_000 */
  terminalRetentionMs?: number;
  /** @default 604_800_000 */
  idleTtlMs?: number;
  /** How long a publish's idempotency key is remembered, in ms. @default 300_000 */
  idempotencyWindowMs?: number;
}

/** The Redis store's options: where Redis is, and the domain of the events kept there. */
export interface RedisStoreOptions<
  E extends DomainEvent = DomainEvent,
  S extends DomainSnapshot = DomainSnapshot,
> extends RedisConnectionOptions {
  /** The domain of the events it keeps (it must have `append`): the store is typed by it. */
  domain: StreamDomain<E, S>;
}

export interface ResolvedRedisStoreOptions {
  readonly url?: string;
  readonly clusterNodes: readonly { host: string; port: number }[];
  readonly keyPrefix: string;
  readonly historySize: number;
  readonly commandTimeoutMs: number;
  readonly pingIntervalMs: number;
  readonly connectTimeoutMs: number;
  readonly reconnectMaxDelayMs: number;
  readonly clusterSlotsRefreshMs: number;
  readonly terminalRetentionMs: number;
  readonly idleTtlMs: number;
  readonly idempotencyWindowMs: number;
}

export function resolveRedisStoreOptions(opts: RedisConnectionOptions): ResolvedRedisStoreOptions {
  const clusterNodes = (opts.clusterNodes ?? []).map(parseHostPort);
  if (opts.url === undefined && clusterNodes.length === 0) {
    throw new TypeError('the Redis store needs a url or cluster nodes');
  }
  const resolved: ResolvedRedisStoreOptions = {
    url: opts.url,
    clusterNodes,
    keyPrefix: opts.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX,
    historySize: opts.historySize ?? DEFAULT_REDIS_HISTORY_SIZE,
    commandTimeoutMs: opts.commandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    pingIntervalMs: opts.pingIntervalMs ?? DEFAULT_REDIS_PING_INTERVAL_MS,
    connectTimeoutMs: opts.connectTimeoutMs ?? DEFAULT_REDIS_CONNECT_TIMEOUT_MS,
    reconnectMaxDelayMs: opts.reconnectMaxDelayMs ?? DEFAULT_REDIS_RECONNECT_MAX_DELAY_MS,
    clusterSlotsRefreshMs: opts.clusterSlotsRefreshMs ?? DEFAULT_REDIS_CLUSTER_SLOTS_REFRESH_MS,
    terminalRetentionMs: opts.terminalRetentionMs ?? DEFAULT_REDIS_TERMINAL_RETENTION_MS,
    idleTtlMs: opts.idleTtlMs ?? DEFAULT_REDIS_IDLE_TTL_MS,
    idempotencyWindowMs: opts.idempotencyWindowMs ?? DEFAULT_IDEMPOTENCY_WINDOW_MS,
  };
  for (const key of [
    'historySize',
    'commandTimeoutMs',
    'pingIntervalMs',
    'connectTimeoutMs',
    'reconnectMaxDelayMs',
    'clusterSlotsRefreshMs',
    'terminalRetentionMs',
    'idleTtlMs',
    'idempotencyWindowMs',
  ] as const) {
    if (!Number.isInteger(resolved[key]) || resolved[key] < 1) {
      throw new TypeError(`${key} must be an integer >= 1`);
    }
  }
  return resolved;
}

/** `host:port` or `[v6]:port`. */
export function parseHostPort(node: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(node.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port < 1 || port > 65_535) {
    throw new TypeError(`Redis node ${JSON.stringify(node)} must be host:port`);
  }
  return { host: m[1] ?? m[2], port };
}
