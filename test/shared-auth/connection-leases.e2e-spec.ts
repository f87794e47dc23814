import { ErrorCode } from '@app/contracts';
import { Attempts } from '../auth/attempts';
import { RedisServer } from '../support/redis-server';
import { openSseH1, type SseStream } from '../support/sse-stream';
import { TcpGate } from '../support/tcp-gate';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const LEASE_MS = 1_500;

/**
 * An instance that is gone without giving its connection slots back (here: cut off from
 * Redis, so it can neither release nor renew; a SIGKILL looks the same to Redis) must not
 * hold them for ever: they stop counting one lease after its last renewal.
 */
describe('connection counts of a dead instance expire', () => {
  let redis: RedisServer;
  let gate: TcpGate;
  let dying: TestApp;
  let survivor: TestApp;
  let attempts: Attempts;
  const streams: SseStream[] = [];

  beforeAll(async () => {
    redis = await RedisServer.launch();
    gate = await TcpGate.listen(redis.port);
    const env = {
      LIMIT_CONNECTIONS_PER_PRINCIPAL: '3',
      LIMIT_CONNECTION_LEASE_MS: String(LEASE_MS),
    };
    dying = await startTestApp({ ...env, REDIS_URL: `redis://127.0.0.1:${gate.port}` });
    survivor = await startTestApp({ ...env, REDIS_URL: redis.url });
    attempts = new Attempts(survivor);
  });
  afterAll(async () => {
    for (const s of streams.splice(0)) s.close();
    await attempts?.close();
    // Let it reach Redis again so that it closes its connections, not only drops them.
    gate?.open();
    await dying?.close();
    await survivor?.close();
    await gate?.close();
    await redis?.shutdown();
  });

  it('the survivor refuses while the other instance holds the slots, and accepts one lease after it is cut off', async () => {
    await survivor.createOrder('lease-1');
    const token = survivor.token({ sub: 'leased', scopes: ['orders:read:any'] });
    for (let i = 0; i < 3; i++) {
      const s = await openSseH1(`${dying.httpUrl}/v1/orders/lease-1/stream`, {
        authorization: `Bearer ${token}`,
      });
      streams.push(s);
      expect(s.status).toBe(200);
    }
    // Past a renewal or two: the counts are kept alive while the instance lives.
    await new Promise((r) => setTimeout(r, LEASE_MS));
    expect((await attempts.run('sse', 'lease-1', token)).code).toBe(ErrorCode.ResourceExhausted);

    gate.shut();
    const cutAt = Date.now();
    expect((await attempts.run('sse', 'lease-1', token)).code).toBe(ErrorCode.ResourceExhausted);
    await waitFor(
      async () => (await attempts.run('sse', 'lease-1', token)).code === 'ok',
      'the dead instance’s slots to expire',
      LEASE_MS * 4,
      100,
    );
    // Not before its lease could have run out (renewed every third of it).
    expect(Date.now() - cutAt).toBeGreaterThanOrEqual((LEASE_MS * 2) / 3 - 50);
  });
});
