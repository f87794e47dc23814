import { request } from 'undici';
import { ORDER_DOMAIN, OrderStatus } from '@app/order-domain';
import { RedisStreamStore } from '@app/redis-store';
import { RedisServer } from '../support/redis-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** What "within a few seconds" means here: the ping interval plus the command timeout, with room. */
const NOTICE_MS = 5_000;

/**
 * Issue 35, 2: a Redis that hangs (SIGSTOP) keeps its TCP connections open, so a
 * readiness that looks at the connection's state alone stayed 200 `store: up` while every
 * publish answered 503 after the command timeout. Readiness must follow whether Redis
 * answers, for the store's connection and for the auth state's, and come back after.
 */
describe('readiness with a frozen Redis (issue 35, 2)', () => {
  let redis: RedisServer;
  let other: RedisServer | undefined;
  let app: TestApp | undefined;

  beforeEach(async () => {
    redis = await RedisServer.launch();
  });
  afterEach(async () => {
    redis.thaw();
    await app?.close();
    app = undefined;
    await redis.shutdown();
    await other?.shutdown();
    other = undefined;
  });
  const env = (url: string) => ({
    REDIS_URL: url,
    REDIS_COMMAND_TIMEOUT_MS: '500',
    REDIS_PING_INTERVAL_MS: '200',
  });

  const ready = async () => {
    const res = await request(`${app!.httpUrl}/health/ready`);
    const body = (await res.body.json()) as { details?: Record<string, { status: string }> };
    return {
      status: res.statusCode,
      store: body.details?.store?.status,
      authState: body.details?.authState?.status,
    };
  };
  const publish = async (orderId: string, status: OrderStatus) => {
    const res = await request(`${app!.httpUrl}/v1/orders/${orderId}/status`, {
      method: 'POST',
      headers: { ...app!.authHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ status }),
    });
    await res.body.dump();
    return res.statusCode;
  };

  it('answers 503 with store and auth state down while Redis is stopped, and 200 once it runs again', async () => {
    app = await startTestApp(env(redis.url));
    // On a loaded host one 500 ms ping may miss right after start: up within the notice.
    await waitFor(async () => (await ready()).status === 200, 'ready after start', NOTICE_MS, 50);
    expect(await ready()).toEqual({ status: 200, store: 'up', authState: 'up' });
    expect(await publish('frozen-1', OrderStatus.Created)).toBe(201);

    redis.freeze();
    // Each connection notices on its own ping: wait for both, not the first one.
    const bothDown = async () => {
      const r = await ready();
      return r.store === 'down' && r.authState === 'down';
    };
    await waitFor(bothDown, 'store and auth state down', NOTICE_MS, 50);
    expect(await ready()).toEqual({ status: 503, store: 'down', authState: 'down' });
    // What a balancer that ignored readiness would get meanwhile.
    expect(await publish('frozen-1', OrderStatus.Paid)).toBe(503);

    redis.thaw();
    await waitFor(async () => (await ready()).status === 200, 'ready again', NOTICE_MS, 50);
    expect(await ready()).toEqual({ status: 200, store: 'up', authState: 'up' });
    expect(await publish('frozen-1', OrderStatus.Paid)).toBe(201);
  });

  it('follows the auth state connection of its own: 503 with the store up when only its Redis is frozen', async () => {
    // The store on a Redis of its own that keeps running; REDIS_URL, which the auth state
    // connects to, is the one frozen.
    other = await RedisServer.launch();
    const store = new RedisStreamStore({
      domain: ORDER_DOMAIN,
      url: other.url,
      pingIntervalMs: 200,
    });
    expect(await store.whenUp(5_000)).toBe(true);
    app = await startTestApp(env(redis.url), { store });
    expect(await ready()).toEqual({ status: 200, store: 'up', authState: 'up' });

    redis.freeze();
    await waitFor(async () => (await ready()).status === 503, 'not ready', NOTICE_MS, 50);
    expect(await ready()).toEqual({ status: 503, store: 'up', authState: 'down' });

    redis.thaw();
    await waitFor(async () => (await ready()).status === 200, 'ready again', NOTICE_MS, 50);
    expect(await ready()).toEqual({ status: 200, store: 'up', authState: 'up' });
  });
});
