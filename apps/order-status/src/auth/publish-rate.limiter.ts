import { Inject, Injectable } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import type { Principal } from '@app/auth';
import { ErrorCode, GatewayError } from '@app/contracts';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';

const THROTTLER_NAME = 'publish';

/**
 * Publish rate per principal (`LIMIT_PUBLISH_PER_WINDOW` per `LIMIT_PUBLISH_WINDOW_MS`),
 * shared by REST and gRPC publishes. It uses @nestjs/throttler's storage directly rather
 * than its guard: the guard only understands HTTP requests and keys by IP, while this
 * limit is per token subject and must count both transports in one bucket. The storage
 * is the auth state's: in memory, or in Redis (shared by every instance) when Redis is
 * configured, where an outage answers Unavailable.
 */
@Injectable()
export class PublishRateLimiter {
  constructor(
    @Inject(ThrottlerStorage) private readonly storage: ThrottlerStorage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** @throws GatewayError ResourceExhausted when the principal is over its rate. */
  async consume(principal: Principal): Promise<void> {
    const { publishPerWindow: limit, publishWindowMs: windowMs } = this.config.limits;
    const record = await this.storage.increment(
      // The storage scopes keys by throttler name itself.
      principal.subject,
      windowMs,
      limit,
      windowMs,
      THROTTLER_NAME,
    );
    if (record.isBlocked) {
      // The throttler counts in whole seconds.
      const retryS = Math.max(1, Math.ceil(record.timeToBlockExpire));
      throw new GatewayError(
        ErrorCode.ResourceExhausted,
        `publish rate limit: at most ${limit} per ${windowMs} ms per principal; retry in ${retryS} s`,
        retryS * 1000,
      );
    }
  }
}
