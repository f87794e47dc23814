import { readFile } from 'node:fs/promises';
import {
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerStorage } from '@nestjs/throttler';
import { ConnectionLimiter, StreamTicketStore, TokenVerifier, type JsonWebKeySet } from '@app/auth';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { MetricsService } from '../ops/metrics.service';
import { AUTH_STATE, createAuthState, type AuthState } from './auth-state';
import { AuthService } from './auth.service';
import { DevTokenController } from './dev-token.controller';
import { HttpAuthGuard } from './http-auth.guard';
import { PublishRateLimiter } from './publish-rate.limiter';
import { StreamTicketsController } from './stream-tickets.controller';

/**
 * Counts the auth state's and the verifier's in-process structures in `order_memory_*`,
 * and closes the auth state (and its Redis connection) when the application shuts down.
 */
@Injectable()
class AuthStateLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(AUTH_STATE) private readonly state: AuthState,
    @Inject(TokenVerifier) private readonly verifier: TokenVerifier,
    @Inject(MetricsService) private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    this.metrics.trackMemory(() => [this.verifier.memoryUse, ...(this.state.memoryUse?.() ?? [])]);
  }

  onApplicationShutdown(): Promise<void> {
    return this.state.close();
  }
}

/**
 * Authentication and limits for the whole service (global, so every transport module
 * can inject AuthService and the limiters): the token verifier, the stream tickets, the
 * per-principal connection and publish-rate limits, and the HTTP guard (APP_GUARD: every
 * HTTP route needs a token unless marked @Public()). Tickets and limits live in the
 * auth state (auth-state.ts): in this process, or in Redis whenever the store is, so
 * that every instance behind a balancer sees the same ones.
 */
@Global()
@Module({
  controllers: [StreamTicketsController, DevTokenController],
  providers: [
    {
      provide: TokenVerifier,
      useFactory: async (config: AppConfig) => {
        const a = config.auth;
        const jwks = a.jwksFile
          ? (JSON.parse(await readFile(a.jwksFile, 'utf8')) as JsonWebKeySet)
          : undefined;
        return TokenVerifier.create({
          hs256Secret: a.hs256Secret,
          jwks,
          jwksUrl: a.jwksUrl,
          jwksAlgorithms: a.jwksAlgorithms,
          issuer: a.issuer,
          audience: a.audience,
          clockToleranceS: a.clockToleranceS,
          verifiedMaxBytes: config.memory.verifiedTokensMaxBytes,
        });
      },
      inject: [APP_CONFIG],
    },
    { provide: AUTH_STATE, useFactory: createAuthState, inject: [APP_CONFIG] },
    AuthStateLifecycle,
    {
      provide: StreamTicketStore,
      useFactory: (state: AuthState) => state.tickets,
      inject: [AUTH_STATE],
    },
    {
      provide: ConnectionLimiter,
      useFactory: (state: AuthState) => state.connections,
      inject: [AUTH_STATE],
    },
    {
      provide: ThrottlerStorage,
      useFactory: (state: AuthState) => state.rateStorage,
      inject: [AUTH_STATE],
    },
    AuthService,
    PublishRateLimiter,
    { provide: APP_GUARD, useClass: HttpAuthGuard },
  ],
  exports: [
    AuthService,
    PublishRateLimiter,
    ConnectionLimiter,
    StreamTicketStore,
    TokenVerifier,
    // Readiness follows its connection.
    AUTH_STATE,
  ],
})
export class AuthModule {}
