import { readFile } from 'node:fs/promises';
import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerStorageService } from '@nestjs/throttler';
import { ConnectionLimiter, StreamTicketStore, TokenVerifier, type JsonWebKeySet } from '@app/auth';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { AuthService } from './auth.service';
import { DevTokenController } from './dev-token.controller';
import { HttpAuthGuard } from './http-auth.guard';
import { PublishRateLimiter } from './publish-rate.limiter';
import { StreamTicketsController } from './stream-tickets.controller';

/**
 * Authentication and limits for the whole service (global, so every transport module
 * can inject AuthService and the limiters): the token verifier, the stream tickets, the
 * per-principal connection and publish-rate limits, and the HTTP guard (APP_GUARD: every
 * HTTP route needs a token unless marked @Public()).
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
        });
      },
      inject: [APP_CONFIG],
    },
    {
      provide: StreamTicketStore,
      useFactory: (config: AppConfig) => new StreamTicketStore({ ttlMs: config.auth.ticketTtlMs }),
      inject: [APP_CONFIG],
    },
    {
      provide: ConnectionLimiter,
      useFactory: (config: AppConfig) =>
        new ConnectionLimiter(config.limits.connectionsPerPrincipal),
      inject: [APP_CONFIG],
    },
    ThrottlerStorageService,
    AuthService,
    PublishRateLimiter,
    { provide: APP_GUARD, useClass: HttpAuthGuard },
  ],
  exports: [AuthService, PublishRateLimiter, ConnectionLimiter, StreamTicketStore, TokenVerifier],
})
export class AuthModule {}
