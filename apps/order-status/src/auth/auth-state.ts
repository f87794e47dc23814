import { ThrottlerStorageService, type ThrottlerStorage } from '@nestjs/throttler';
import {
  InMemoryConnectionLimiter,
  InMemoryStreamTicketStore,
  type ConnectionLimiter,
  type StreamTicketStore,
} from '@app/auth';
import { RedisAuthState } from '@app/redis-store';
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
  /** Bounded: gives back timers, this instance's shared counts and the connection. */
  close(): Promise<void>;
}

/** DI token of the AuthState. */
export const AUTH_STATE = Symbol('AUTH_STATE');

export function createAuthState(config: AppConfig): AuthState {
  const { auth, limits, redis } = config;
  if (redis !== undefined) {
    return new RedisAuthState({
      redis,
      ticketTtlMs: auth.ticketTtlMs,
      maxConnectionsPerPrincipal: limits.connectionsPerPrincipal,
      connectionLeaseMs: limits.connectionLeaseMs,
    });
  }
  const tickets = new InMemoryStreamTicketStore({ ttlMs: auth.ticketTtlMs });
  const connections = new InMemoryConnectionLimiter(limits.connectionsPerPrincipal);
  const rateStorage = new ThrottlerStorageService();
  return {
    tickets,
    connections,
    rateStorage,
    close: async () => {
      await tickets.close();
      await connections.close();
      rateStorage.onApplicationShutdown();
    },
  };
}
