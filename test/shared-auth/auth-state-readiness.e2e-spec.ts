import { request } from 'undici';
import { ORDER_DOMAIN, OrderStatus, type OrderEvent, type OrderSnapshot } from '@app/order-domain';
import { RedisStreamStore } from '@app/redis-store';
import { RedisServer } from '../support/redis-server';
import { TcpGate } from '../support/tcp-gate';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** Short, so a start-up that waits for an unreachable Redis does not hold the test long. */
const CONNECT_TIMEOUT_MS = 500;
/** For a start-up whose Redis is reachable: the test is about the wait, not its bound. */
const REACHABLE_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Tickets, connection slots and rate limits live in Redis on a connection of their own.
 * While it is not ready every check answers 503, so the instance must not say it is
 * ready: a balancer would send it publishes that fail. Reproduced at start-up, where the
 * service used to report ready (and take traffic) before that connection was up, and
 * answered its first publishes 503 "rate limits unavailable".
 *
 * The store gets its own connection straight to Redis; the auth state's goes through a
 * gate the test shuts and opens, so "store up, auth state down" is a state, not a race.
 */
describe('readiness follows the shared auth state', () => {
  let redis: RedisServer;
  let gate: TcpGate;
  let store: RedisStreamStore<OrderEvent, OrderSnapshot>;
  let app: TestApp | undefined;

  beforeEach(async () => {
    redis = await RedisServer.launch();
    gate = await TcpGate.listen(redis.port);
    store = new RedisStreamStore({ domain: ORDER_DOMAIN, url: redis.url });
    expect(await store.whenUp(5_000)).toBe(true);
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await gate.close();
    await redis.shutdown();
  });

  const ready = async (httpUrl: string) => {
    const res = await request(`${httpUrl}/health/ready`);
    const body = (await res.body.json()) as { details?: Record<string, { status: string }> };
    return { status: res.statusCode, authState: body.details?.authState?.status };
  };
  const publish = async (httpUrl: string, orderId: string, status: OrderStatus) => {
    const res = await request(`${httpUrl}/v1/orders/${orderId}/status`, {
      method: 'POST',
      headers: { ...app!.authHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ status }),
    });
    await res.body.dump();
    return res.statusCode;
  };
  const start = (env: Record<string, string> = {}) =>
    startTestApp(
      {
        REDIS_URL: `redis://127.0.0.1:${gate.port}`,
        REDIS_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
        REDIS_RECONNECT_MAX_DELAY_MS: '50',
        ...env,
      },
      { store },
    );

  it('starts not ready while the auth state cannot reach Redis, and becomes ready when it can', async () => {
    gate.shut();
    app = await start();
    const httpUrl = app.httpUrl;

    expect(await ready(httpUrl)).toEqual({ status: 503, authState: 'down' });
    await app.createOrder('ready-1');
    // What a balancer that ignored readiness would get.
    expect(await publish(httpUrl, 'ready-1', OrderStatus.Paid)).toBe(503);

    gate.open();
    await waitFor(async () => (await ready(httpUrl)).status === 200, 'ready once Redis is back');
    expect(await ready(httpUrl)).toEqual({ status: 200, authState: 'up' });
    expect(await publish(httpUrl, 'ready-1', OrderStatus.Paid)).toBe(201);
  });

  it('waits for the auth state at start-up: the first publish after start succeeds', async () => {
    // Redis is reachable here: the wait is bounded by the connect timeout, which a loaded
    // CI host can outlast at 500 ms before the auth state's first connection is up.
    app = await start({ REDIS_CONNECT_TIMEOUT_MS: String(REACHABLE_CONNECT_TIMEOUT_MS) });
    await app.createOrder('ready-2');
    expect(await publish(app.httpUrl, 'ready-2', OrderStatus.Paid)).toBe(201);
    expect(await ready(app.httpUrl)).toEqual({ status: 200, authState: 'up' });
  });

  it('goes not ready when the auth state loses Redis, and back', async () => {
    app = await start();
    const httpUrl = app.httpUrl;
    expect((await ready(httpUrl)).status).toBe(200);
    gate.shut();
    await waitFor(async () => (await ready(httpUrl)).status === 503, 'not ready without Redis');
    expect(await ready(httpUrl)).toEqual({ status: 503, authState: 'down' });
    gate.open();
    await waitFor(async () => (await ready(httpUrl)).status === 200, 'ready again');
  });
});
