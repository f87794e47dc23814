import { Logger } from '@nestjs/common';
import { closeRedisClient, createRedisClient, type RedisClient } from '../redis-client';
import { RedisPing } from '../redis-ping';
import type { RedisConnectionOptions } from '../redis-store-options';
import { authStateKeys } from './auth-state-keys';
import { RedisConnectionLimiter } from './redis-connection-limiter';
import { RedisStreamTicketStore } from './redis-stream-tickets';
import { RedisThrottlerStorage } from './redis-throttler-storage';

export interface RedisAuthStateOptions {
  /** Where Redis is, as for the order store (its connection settings apply here too). */
  readonly redis: RedisConnectionOptions;
  readonly ticketTtlMs?: number;
  readonly maxTicketsPerSubject?: number;
  /** 0: unlimited. */
  readonly maxConnectionsPerPrincipal: number;
  readonly connectionLeaseMs?: number;
  /** For tests. @default a random UUID */
  readonly instanceId?: string;
}

/**
 * The auth state every instance must agree on (stream tickets, per-principal connection
 * counts, rate limits), in Redis, over one connection of its own: it neither queues
 * behind the order store's traffic nor shares its reconnection life.
 */
export class RedisAuthState {
  readonly client: RedisClient;
  readonly tickets: RedisStreamTicketStore;
  readonly connections: RedisConnectionLimiter;
  readonly rateStorage: RedisThrottlerStorage;
  private readonly ping: RedisPing;
  private closing?: Promise<void>;

  constructor(opts: RedisAuthStateOptions) {
    const { client, options } = createRedisClient(opts.redis);
    this.client = client;
    this.ping = new RedisPing(client, options.pingIntervalMs);
    const logger = new Logger('RedisAuthState');
    // One line per outage is the order store's job; here the details go to debug.
    client.on('error', (err: Error) => logger.debug?.(`redis: ${err.message}`));
    const keys = authStateKeys(options.keyPrefix);
    this.tickets = new RedisStreamTicketStore(client, keys, {
      ttlMs: opts.ticketTtlMs,
      maxPerSubject: opts.maxTicketsPerSubject,
    });
    this.connections = new RedisConnectionLimiter(client, keys, {
      max: opts.maxConnectionsPerPrincipal,
      leaseMs: opts.connectionLeaseMs,
      instanceId: opts.instanceId,
    });
    this.rateStorage = new RedisThrottlerStorage(client, keys);
  }

  /**
   * 'up' while its connection is ready and Redis answers. Otherwise every ticket,
   * connection-slot and rate-limit check answers 503 (no offline queue, or the command
   * timeout), so readiness follows it.
   */
  health(): 'up' | 'down' {
    return this.client.status === 'ready' && this.ping.answering ? 'up' : 'down';
  }

  /** Resolves true once the connection is ready, false after `timeoutMs` (never rejects). */
  whenUp(timeoutMs: number): Promise<boolean> {
    if (this.health() === 'up') return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (up: boolean) => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        resolve(up);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.client.on('ready', onReady);
    });
  }

  /** Removes this instance's connection counts, then closes the connection; bounded. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      this.ping.close();
      await this.connections.close();
      await this.tickets.close();
      await closeRedisClient(this.client);
    })());
  }
}
