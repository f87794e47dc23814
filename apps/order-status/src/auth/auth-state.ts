import { Logger } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { MemoryUse } from '@app/contracts';
import {
  InMemoryConnectionLimiter,
  InMemoryRateWindows,
  InMemoryStreamTicketStore,
  type ConnectionLimiter,
  type StreamTicketStore,
} from '@app/auth';
import type { AppConfig } from '../config/app-config';

/**
 * The auth state that must be the same on every instance behind a balancer: stream
 * tickets (issued by one instance, redeemed on another), per-principal connection counts
 * and publish rate limits. In this process when the service runs alone (the embedded
 * store), in Redis when REDIS_URL or REDIS_CLUSTER_NODES is set, chosen like the store.
 */
export interface AuthState {
  readonly tickets: StreamTicketStore;
  readonly connections: ConnectionLimiter;
  /** @nestjs/throttler's storage, which the publish rate limit counts in. */
  readonly rateStorage: ThrottlerStorage;
  /**
   * Whether tickets and limits can be checked now (the Redis connection is ready); the
   * in-process state has no connection and is always up. Readiness follows it.
   */
  health?(): 'up' | 'down';
  /** Resolves true once up, false after `timeoutMs`. */
  whenUp?(timeoutMs: number): Promise<boolean>;
  /**
   * The structures it keeps in this process, bounded in bytes (`order_memory_*`); the
   * Redis state keeps them in Redis and has none.
   */
  memoryUse?(): readonly MemoryUse[];
  /** Bounded: gives back timers, this instance's shared counts and the connection. */
  close(): Promise<void>;
}

/** DI token of the AuthState. */
export const AUTH_STATE = Symbol('AUTH_STATE');

/**
 * Start-up waits for the Redis connection up to the connect timeout, as it does for the
 * store's, and never fails for it: until the connection is ready every request that
 * checks a ticket or a limit would answer 503, so the instance starts not ready instead
 * (an instance that took traffic before its auth state was connected answered its first
 * publishes 503).
 */
export async function createAuthState(config: AppConfig): Promise<AuthState> {
  const { auth, limits, memory, redis } = config;
  if (redis !== undefined) {
    // Loaded only with Redis, as the store is (see create-store.ts).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { RedisAuthState } = require('@app/redis-store') as typeof import('@app/redis-store');
    const state = new RedisAuthState({
      redis,
      ticketTtlMs: auth.ticketTtlMs,
      maxConnectionsPerPrincipal: limits.connectionsPerPrincipal,
      connectionLeaseMs: limits.connectionLeaseMs,
    });
    if (!(await state.whenUp(redis.connectTimeoutMs))) {
      new Logger('AuthState').warn(
        'Redis not reachable at start-up for tickets and limits: starting not ready',
      );
    }
    return state;
  }
  const tickets = new InMemoryStreamTicketStore({
    ttlMs: auth.ticketTtlMs,
    maxBytes: memory.streamTicketsMaxBytes,
  });
  const connections = new InMemoryConnectionLimiter(limits.connectionsPerPrincipal);
  const rateStorage = new InMemoryRateWindows({ maxBytes: memory.rateWindowsMaxBytes });
  return {
    tickets,
    connections,
    rateStorage,
    memoryUse: () => [tickets.memoryUse, rateStorage.memoryUse],
    close: async () => {
      await tickets.close();
      await connections.close();
      rateStorage.close();
    },
  };
}
