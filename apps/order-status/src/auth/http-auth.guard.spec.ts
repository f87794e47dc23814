import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { FastifyRequest } from 'fastify';
import {
  ConnectionLimiter,
  InMemoryStreamTicketStore,
  Scope,
  TokenVerifier,
  type Principal,
} from '@app/auth';
import {
  forgeToken,
  TEST_AUDIENCE,
  TEST_ISSUER,
  TEST_SECRET,
  testClaims,
} from '../../../../libs/auth/src/testing/token-fixtures';
import { ErrorCode } from '@app/contracts';
import type { StreamStore } from '@app/store';
import type { AppConfig } from '../config/app-config';
import type { MetricsService } from '../ops/metrics.service';
import { RequireScopes, StreamCredentials } from './auth.decorators';
import { AuthService } from './auth.service';
import { HttpAuthGuard } from './http-auth.guard';

class PollRoute {
  poll(): void {}
  @RequireScopes(Scope.OrdersWrite)
  publish(): void {}
  @StreamCredentials()
  stream(): void {}
}

/**
 * HttpAuthGuard with the real verifier and AuthService: a token verified recently is
 * admitted without a promise (a poll is a request many times a second); a new one is
 * verified first; failures are typed and counted whichever way they come.
 */
describe('HttpAuthGuard', () => {
  let guard: HttpAuthGuard;
  let auth: AuthService;
  const failures: { transport: string; reason: string }[] = [];

  beforeAll(async () => {
    const verifier = await TokenVerifier.create({
      hs256Secret: TEST_SECRET,
      issuer: TEST_ISSUER,
      audience: TEST_AUDIENCE,
    });
    const metrics = {
      authFailures: {
        inc: (labels: { transport: string; reason: string }) => failures.push(labels),
      },
    } as unknown as MetricsService;
    const config = {
      auth: { cookieName: 'session' },
      benchmark: { auth: true },
    } as AppConfig;
    auth = new AuthService(verifier, {} as StreamStore, {} as ConnectionLimiter, metrics, config);
    guard = new HttpAuthGuard(new Reflector(), auth, new InMemoryStreamTicketStore(), config);
  });

  beforeEach(() => (failures.length = 0));

  /** @fastify/cookie's parser as the plugin decorates the instance with it, counted. */
  const parsed: string[] = [];
  const server = {
    parseCookie: (header: string) => {
      parsed.push(header);
      return Object.fromEntries(header.split('; ').map((kv) => kv.split('=') as [string, string]));
    },
  };
  beforeEach(() => (parsed.length = 0));

  const requestWith = (authorization?: string, cookie?: string) =>
    ({
      routeOptions: { url: '/v1/orders/:orderId/events' },
      url: '/v1/orders/o-1/events',
      headers: {
        ...(authorization === undefined ? {} : { authorization }),
        ...(cookie === undefined ? {} : { cookie }),
      },
      query: {},
      server,
      raw: { rawHeaders: authorization === undefined ? [] : ['Authorization', authorization] },
    }) as unknown as FastifyRequest;
  const contextOf = (req: FastifyRequest, handler: keyof PollRoute = 'poll') =>
    new ExecutionContextHost([req, {}], PollRoute, PollRoute.prototype[handler]);

  it('verifies a new token (a promise), then admits it at once on the next request', async () => {
    const token = forgeToken(testClaims({ sub: 'poller', scopes: ['orders:read'] }));
    const first = requestWith(`Bearer ${token}`);
    const verdict = guard.canActivate(contextOf(first));
    expect(verdict).toBeInstanceOf(Promise);
    await expect(verdict).resolves.toBe(true);
    expect(first.principal?.subject).toBe('poller');

    const next = requestWith(`Bearer ${token}`);
    expect(guard.canActivate(contextOf(next))).toBe(true);
    expect(next.principal).toBe(first.principal);
  });

  it('refuses a missing scope on the fast path too, typed and counted', async () => {
    const token = forgeToken(testClaims({ sub: 'reader', scopes: ['orders:read'] }));
    await guard.canActivate(contextOf(requestWith(`Bearer ${token}`)));
    expect(() => guard.canActivate(contextOf(requestWith(`Bearer ${token}`), 'publish'))).toThrow(
      expect.objectContaining({ code: ErrorCode.PermissionDenied }),
    );
    expect(failures).toEqual([{ transport: 'long-poll', reason: 'forbidden' }]);
  });

  it.each([
    ['no credentials', undefined],
    ['a malformed header', 'Basic dXNlcjpwYXNz'],
    [
      'a bad signature',
      `Bearer ${forgeToken(testClaims({ sub: 'x' }), 'HS256', 'another-secret-of-enough-length-0123456789')}`,
    ],
  ])('answers %s with Unauthenticated, as a rejection, counted once', async (_name, header) => {
    const verdict = Promise.resolve().then(() => guard.canActivate(contextOf(requestWith(header))));
    await expect(verdict).rejects.toMatchObject({ code: ErrorCode.Unauthenticated });
    expect(failures).toHaveLength(1);
    expect(failures[0].transport).toBe('long-poll');
  });

  it('authenticateHeaderNow never throws: a failure is a rejected promise', async () => {
    let result: Principal | Promise<Principal> | undefined;
    expect(() => (result = auth.authenticateHeaderNow('Basic x', 'http'))).not.toThrow();
    await expect(result).rejects.toMatchObject({ code: ErrorCode.Unauthenticated });
  });

  it('parses the Cookie header only for a stream route that has neither a token nor a ticket', async () => {
    const token = forgeToken(testClaims({ sub: 'browser', scopes: ['orders:read'] }));
    // A poll (or any bearer route) with a cookie beside its token: the cookie is not read.
    const poll = requestWith(`Bearer ${token}`, `session=${token}; theme=dark`);
    await guard.canActivate(contextOf(poll));
    expect(poll.principal?.subject).toBe('browser');
    expect(parsed).toEqual([]);

    // EventSource on the SSE route sends the session cookie alone: that is the credential.
    const stream = requestWith(undefined, `theme=dark; session=${token}`);
    expect(guard.canActivate(contextOf(stream, 'stream'))).toBe(true);
    expect(stream.principal?.subject).toBe('browser');
    expect(parsed).toEqual([`theme=dark; session=${token}`]);

    // Without the session cookie a stream request is anonymous: typed, counted.
    const verdict = Promise.resolve().then(() =>
      guard.canActivate(contextOf(requestWith(undefined, 'theme=dark'), 'stream')),
    );
    await expect(verdict).rejects.toMatchObject({ code: ErrorCode.Unauthenticated });
    expect(failures).toHaveLength(1);
  });
});
