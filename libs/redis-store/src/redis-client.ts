import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { ErrorCode, GatewayError } from '@app/contracts';
import {
  resolveRedisStoreOptions,
  type RedisConnectionOptions,
  type ResolvedRedisStoreOptions,
} from './redis-store-options';

/** One Redis server or a cluster: the commands used here behave alike on both. */
export type RedisClient = Redis | Cluster;

/** @default 1_000 ms a graceful QUIT may take before the connection is dropped */
export const REDIS_QUIT_TIMEOUT_MS = 1_000;

/**
 * A command connection configured like the order store's: it fails fast while Redis is
 * away (no offline queue, one retry, a command timeout) and reconnects with a capped
 * backoff, so a caller gets an error within `commandTimeoutMs` and never waits for an
 * outage to end. For the service's other shared state (stream tickets, connection counts,
 * rate limits), which must not queue behind the store's traffic nor hang on it.
 */
export function createRedisClient(opts: RedisConnectionOptions): {
  client: RedisClient;
  options: ResolvedRedisStoreOptions;
} {
  const o = resolveRedisStoreOptions(opts);
  const backoff = (times: number) => Math.min(50 * 2 ** Math.min(times, 10), o.reconnectMaxDelayMs);
  const redisOptions: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: o.commandTimeoutMs,
    connectTimeout: o.connectTimeoutMs,
    retryStrategy: backoff,
    // A command in flight when the connection drops is never re-sent on reconnect (ioredis
    // does by default): its caller may already have had a 503 from the command timeout
    // and retried. Per command: a rate-limit hit, a connection-slot acquire or release and
    // a ticket count are increments, so a re-send counts the failed request on top of its
    // retry; a ticket's SET and GETDEL are one-shot (a late GETDEL would spend a ticket
    // nobody receives); a lease renewal re-sent late could write back a count older than
    // the next one, and renewals repeat on their own. None is worth re-sending.
    autoResendUnfulfilledCommands: false,
  };
  const client =
    o.clusterNodes.length > 0
      ? new Cluster([...o.clusterNodes], {
          redisOptions,
          enableOfflineQueue: false,
          clusterRetryStrategy: backoff,
        })
      : new Redis(o.url as string, redisOptions);
  return { client, options: o };
}

/**
 * Any Redis failure as Unavailable (503 / UNAVAILABLE) naming `what`: clients retry, the
 * service stays up. A GatewayError passes through.
 */
export async function unavailableOnFailure<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw new GatewayError(
      ErrorCode.Unavailable,
      `${what} unavailable: ${err instanceof Error ? err.message : String(err)}`,
      1_000,
    );
  }
}

/**
 * QUIT, bounded: a Redis that does not answer (or a connection that is down) is
 * disconnected instead of waited for. After a QUIT that Redis answered the server closes
 * the connection itself; disconnecting then as well would only arm ioredis's own timer.
 */
export async function closeRedisClient(
  client: RedisClient,
  timeoutMs = REDIS_QUIT_TIMEOUT_MS,
): Promise<void> {
  if (client.status === 'end') return;
  let timer: NodeJS.Timeout | undefined;
  const quit = client.quit().then(
    () => true,
    () => false,
  );
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(resolve, timeoutMs, false)));
  const answered = await Promise.race([quit, timedOut]);
  clearTimeout(timer);
  if (!answered) client.disconnect();
}
