import { ErrorCode, GRPC_STATUS_BY_CODE, HTTP_STATUS_BY_CODE } from '@app/contracts';
import { OrderStatus } from '@app/order-domain';
import { forgeToken, rejectedTokens, testClaims, testKeys } from '../support/auth';
import { startTestApp, type TestApp } from '../support/test-app';
import { Attempts, noSubscriptions, TRANSPORTS } from './attempts';

/**
 * Issue "Auth, deadlines and limits", tests that must exist: on each transport, every
 * kind of bad token is refused with the "who are you" code (401, UNAUTHENTICATED,
 * `unauthenticated` on the socket.io handshake) and not a single event is delivered.
 */
describe('bad tokens are refused on every transport', () => {
  let app: TestApp;
  let attempts: Attempts;

  beforeAll(async () => {
    app = await startTestApp();
    attempts = new Attempts(app);
    // A customer's order with history: a leak would replay these events.
    await app.createOwnedOrder('tok-1', 'alice', OrderStatus.Paid, OrderStatus.Packed);
  });
  afterAll(async () => {
    await attempts.close();
    await app.close();
  });

  const cases = Object.entries(rejectedTokens('alice'));

  describe.each(TRANSPORTS)('%s', (transport) => {
    it.each(cases)('refuses %s', async (_name, token) => {
      const outcome = await attempts.run(transport, 'tok-1', token, 0);
      expect(outcome.code).toBe(ErrorCode.Unauthenticated);
      expect(outcome.events).toBe(0);
      if (typeof outcome.status === 'number' && transport.startsWith('grpc')) {
        expect(outcome.status).toBe(GRPC_STATUS_BY_CODE[ErrorCode.Unauthenticated]);
      } else if (typeof outcome.status === 'number') {
        expect(outcome.status).toBe(HTTP_STATUS_BY_CODE[ErrorCode.Unauthenticated]);
      }
      await noSubscriptions(app);
    });
  });

  it('publishes nothing for a refused token', async () => {
    const before = (await app.store.getSnapshot('tok-1'))?.lastSeq;
    for (const [, token] of cases) {
      await attempts.run('publish', 'tok-1', token);
      await attempts.run('grpc-publish', 'tok-1', token);
    }
    expect((await app.store.getSnapshot('tok-1'))?.lastSeq).toBe(before);
  });

  it('accepts the owner with HS256, RS256 and ES256 tokens on every transport', async () => {
    const claims = testClaims({ sub: 'alice', scopes: ['orders:read'] });
    const tokens = [
      forgeToken(claims),
      forgeToken(claims, 'RS256', testKeys().rsaPrivate),
      forgeToken(claims, 'ES256', testKeys().ecPrivate),
    ];
    for (const token of tokens) {
      for (const transport of [
        'sse',
        'long-poll',
        'snapshot',
        'grpc-get',
        'ws-websocket',
      ] as const) {
        const outcome = await attempts.run(transport, 'tok-1', token, 1);
        expect([transport, outcome.code]).toEqual([transport, 'ok']);
      }
      const stream = await attempts.run('grpc-subscribe', 'tok-1', token, 1);
      expect(stream).toMatchObject({ code: 'ok', events: 2 });
    }
  });
});
