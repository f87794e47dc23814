import { Logger } from '@nestjs/common';
import type { StreamDomain } from '@app/contracts';
import type { StreamStore } from '@app/store';
import type { RedisConfig } from '../config/app-config';

/**
 * The Redis store when configured, else undefined (the bus module then uses the embedded
 * in-memory store). Start-up waits for Redis up to the connect timeout, but never fails
 * for it: the service starts not ready (GET /health/ready answers 503) and catches up
 * when Redis appears, as it would after any outage.
 */
export async function createStreamStore(
  redis: RedisConfig | undefined,
  domain: StreamDomain,
): Promise<StreamStore | undefined> {
  if (redis === undefined) return undefined;
  // Loaded only with Redis: ioredis costs 3-6 % of start-up CPU, for nothing with the
  // embedded store. require(), not import(): TypeScript resolves an import() as an ES
  // module import, where the `@app/*` paths (directories) do not resolve.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { RedisStreamStore } = require('@app/redis-store') as typeof import('@app/redis-store');
  const store = new RedisStreamStore({ ...redis, domain });
  if (!(await store.whenUp(redis.connectTimeoutMs))) {
    new Logger('StreamStore').warn(
      `Redis not reachable at start-up (${redis.url ?? redis.clusterNodes.join(',')}): starting not ready`,
    );
  }
  return store;
}
