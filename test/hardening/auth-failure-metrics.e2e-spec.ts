import { request } from 'undici';
import { OrderStatus } from '@app/order-domain';
import { Attempts, type AttemptTransport } from '../auth/attempts';
import { testClaims, forgeToken } from '../support/auth';
import { startTestApp, type TestApp } from '../support/test-app';

/** The transport label each attempt is counted under. */
const LABELS: ReadonlyArray<readonly [AttemptTransport, string]> = [
  ['snapshot', 'http'],
  ['sse', 'sse'],
  ['long-poll', 'long-poll'],
  ['grpc-subscribe', 'grpc'],
  ['ws-websocket', 'ws'],
];

/** `order_auth_failures_total` as `{transport}/{reason}` -> count. */
async function authFailures(app: TestApp): Promise<Map<string, number>> {
  const res = await request(`${app.httpUrl}/metrics`);
  const out = new Map<string, number>();
  for (const m of (await res.body.text()).matchAll(
    /^order_auth_failures_total\{(?=[^}]*transport="([^"]+)")(?=[^}]*reason="([^"]+)")[^}]*\} (\d+)$/gm,
  )) {
    out.set(`${m[1]}/${m[2]}`, Number(m[3]));
  }
  return out;
}

/**
 * Real refusals on every transport are counted in `order_auth_failures_total` by
 * transport and reason: no token (`missing`), a malformed one (`invalid`), an expired one
 * (`expired`), someone else's order (`forbidden`, although the client sees not_found).
 */
describe('order_auth_failures_total', () => {
  let app: TestApp;
  let attempts: Attempts;

  beforeAll(async () => {
    app = await startTestApp();
    attempts = new Attempts(app);
    await app.createOwnedOrder('af-1', 'bob', OrderStatus.Paid);
  });
  afterAll(async () => {
    await attempts.close();
    await app.close();
  });

  it('counts missing, invalid, expired and forbidden on every transport', async () => {
    expect(await authFailures(app)).toEqual(new Map());
    const now = Math.floor(Date.now() / 1000);
    const tokens: Record<string, string | undefined> = {
      missing: undefined,
      invalid: 'not-a-jwt',
      expired: forgeToken({ ...testClaims({ sub: 'alice' }), exp: now - 3600 }),
      forbidden: app.token({ sub: 'alice', scopes: ['orders:read'] }),
    };
    const expected = new Map<string, number>();
    for (const [transport, label] of LABELS) {
      for (const [reason, token] of Object.entries(tokens)) {
        const outcome = await attempts.run(transport, 'af-1', token);
        expect([transport, reason, outcome.code === 'ok']).toEqual([transport, reason, false]);
        expected.set(`${label}/${reason}`, 1);
      }
    }
    expect(await authFailures(app)).toEqual(expected);
  });

  it('does not count a missing order or a good token', async () => {
    const before = await authFailures(app);
    await attempts.run('snapshot', 'af-404', app.defaultToken);
    await attempts.run('grpc-subscribe', 'af-1', app.defaultToken);
    expect(await authFailures(app)).toEqual(before);
  });
});
