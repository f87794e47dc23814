import type { ThrottlerStorage } from '@nestjs/throttler';
import { throttlerRecord, type ThrottlerRecord } from '@app/auth';
import { unavailableOnFailure, type RedisClient } from '../redis-client';
import type { AuthStateKeys } from './auth-state-keys';
import { RATE_LIMIT_SCRIPT } from './auth-state-scripts';

/**
 * @nestjs/throttler's storage in Redis, so a rate limit counts a principal's requests on
 * every instance together. One Lua script per hit (RATE_LIMIT_SCRIPT: a fixed window with
 * a block, as the in-memory storage behaves), two keys under one hash tag, so it runs on
 * Redis Cluster too. A Redis failure rejects with GatewayError Unavailable.
 *
 * Maintained packages exist (@nest-lab/throttler-storage-redis): this one is a few lines,
 * sends the script's text once per connection and its SHA on every other hit, keys in the
 * service's prefix, and answers outages as the rest of the service does.
 */
export class RedisThrottlerStorage implements ThrottlerStorage {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: AuthStateKeys,
  ) {}

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerRecord> {
    const id = `${throttlerName}:${key}`;
    const [hits, windowLeftMs, blocked, blockLeftMs] = await unavailableOnFailure(
      'rate limits',
      () =>
        RATE_LIMIT_SCRIPT.run(
          this.client,
          [this.keys.rateHits(id), this.keys.rateBlock(id)],
          [ttl, limit, blockDuration],
        ),
    );
    return throttlerRecord(hits, windowLeftMs, blocked === 1, blockLeftMs);
  }
}
