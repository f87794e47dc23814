import type { ClientHttp2Session } from 'node:http2';
import { request } from 'undici';
import { OrderStatus } from '@app/order-domain';
import { h2Connect, h2Get } from '../support/h2-client';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

interface PollBody {
  orderId: string;
  events: { seq: number; status: string }[];
  reset?: { reason: string; snapshot: { lastSeq: number; status: string } };
  next: number;
  completed: boolean;
}

interface Answer {
  status: number;
  body: string;
  headers: Record<string, unknown>;
}

describe('long-poll transport', () => {
  let app: TestApp;
  let h2: ClientHttp2Session;

  const start = async (env: Record<string, string> = {}) => {
    app = await startTestApp(env);
    h2 = await h2Connect(app.httpsUrl, app.tlsCert);
  };
  afterEach(async () => {
    h2.close();
    await app.close();
  });

  const get: Record<'h1' | 'h2', (path: string, signal?: AbortSignal) => Promise<Answer>> = {
    h1: async (path, signal) => {
      const res = await request(`${app.httpUrl}${path}`, { signal, headers: app.authHeaders });
      return { status: res.statusCode, body: await res.body.text(), headers: res.headers };
    },
    h2: async (path) => {
      const res = await h2Get(h2, path);
      return { status: res.status, body: res.body, headers: res.headers };
    },
  };

  describe.each(['h1', 'h2'] as const)('over %s', (proto) => {
    beforeEach(() => start({ LONG_POLL_MAX_BATCH: '3' }));

    it('follows a scripted sequence with the next cursor until the order completes', async () => {
      await app.createOrder('lp-a');
      const publishing = (async () => {
        for (const s of [
          OrderStatus.Paid,
          OrderStatus.Packed,
          OrderStatus.Shipped,
          OrderStatus.OutForDelivery,
        ]) {
          await app.publish('lp-a', s);
          await new Promise((r) => setTimeout(r, 5));
        }
        await app.publish('lp-a', OrderStatus.Delivered);
      })();
      const seen: number[] = [];
      let after = 0;
      for (let i = 0; i < 20; i++) {
        const res = await get[proto](`/v1/orders/lp-a/events?after=${after}&wait=5`);
        expect(res.status).toBe(200);
        expect(res.headers['cache-control']).toBe('no-store');
        const body = JSON.parse(res.body) as PollBody;
        expect(body.events.length).toBeLessThanOrEqual(3); // LONG_POLL_MAX_BATCH
        seen.push(...body.events.map((e) => e.seq));
        after = body.next;
        if (body.completed) break;
      }
      await publishing;
      expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
      await waitFor(() => app.bus.subscriberCount() === 0, 'no poll left subscribed');
    });

    it('holds the request until the next event, and answers 204 when the wait passes', async () => {
      await app.createOrder('lp-w');
      const held = get[proto]('/v1/orders/lp-w/events?after=1&wait=10');
      await waitFor(() => app.bus.subscriberCount('lp-w') === 1, 'request held');
      const t0 = Date.now();
      await app.publish('lp-w', OrderStatus.Paid);
      const res = await held;
      expect(Date.now() - t0).toBeLessThan(1_000);
      expect(JSON.parse(res.body)).toMatchObject({ events: [{ seq: 2, status: 'paid' }], next: 2 });

      const t1 = Date.now();
      const empty = await get[proto]('/v1/orders/lp-w/events?after=2&wait=1');
      expect(empty.status).toBe(204);
      expect(Date.now() - t1).toBeGreaterThanOrEqual(900);
    });

    it('wait=0 is the short-poll baseline: an immediate 204 or the pending batch', async () => {
      await app.createOrder('lp-s', OrderStatus.Paid);
      const t0 = Date.now();
      expect((await get[proto]('/v1/orders/lp-s/events?after=2&wait=0')).status).toBe(204);
      expect(Date.now() - t0).toBeLessThan(500);
      const res = await get[proto]('/v1/orders/lp-s/events?after=1&wait=0');
      expect(JSON.parse(res.body)).toMatchObject({ events: [{ seq: 2 }], next: 2 });
    });

    it('answers bad input with typed errors', async () => {
      await app.createOrder('lp-b');
      const cases: [string, number, string][] = [
        ['/v1/orders/unknown/events?wait=0', 404, 'not_found'],
        ['/v1/orders/bad%20id/events?wait=0', 400, 'invalid_argument'],
        ['/v1/orders/lp-b/events?after=-1', 400, 'invalid_argument'],
        ['/v1/orders/lp-b/events?after=1.5', 400, 'invalid_argument'],
        ['/v1/orders/lp-b/events?wait=abc', 400, 'invalid_argument'],
        ['/v1/orders/lp-b/events?wait=-1', 400, 'invalid_argument'],
        // Repeated parameters arrive as arrays: refused, not coerced.
        ['/v1/orders/lp-b/events?after=1&after=2', 400, 'invalid_argument'],
        ['/v1/orders/lp-b/events?wait=0&wait=1', 400, 'invalid_argument'],
      ];
      for (const [path, status, code] of cases) {
        const res = await get[proto](path);
        expect([path, res.status]).toEqual([path, status]);
        expect(JSON.parse(res.body)).toEqual({ error: { code, message: expect.any(String) } });
      }
      expect(app.bus.subscriberCount()).toBe(0);
    });
  });

  it('caps wait at LONG_POLL_MAX_WAIT_S', async () => {
    await start({ LONG_POLL_MAX_WAIT_S: '1', LONG_POLL_DEFAULT_WAIT_S: '1' });
    await app.createOrder('lp-cap');
    const t0 = Date.now();
    const res = await get.h1('/v1/orders/lp-cap/events?after=1&wait=600');
    expect(res.status).toBe(204);
    expect(Date.now() - t0).toBeLessThan(3_000);
  });

  it('answers a reset with the snapshot for a cursor older than retention or ahead of the last seq', async () => {
    await start({ BUS_RING_SIZE: '3' });
    await app.createOrder(
      'lp-r',
      OrderStatus.Paid,
      OrderStatus.Packed,
      OrderStatus.Shipped,
      'tracking',
    );
    for (const proto of ['h1', 'h2'] as const) {
      const old = JSON.parse(
        (await get[proto]('/v1/orders/lp-r/events?after=0&wait=0')).body,
      ) as PollBody;
      expect(old).toMatchObject({
        events: [],
        reset: { reason: 'beyond_retention', snapshot: { lastSeq: 5, status: 'shipped' } },
        next: 5,
      });
      const ahead = JSON.parse(
        (await get[proto]('/v1/orders/lp-r/events?after=9&wait=0')).body,
      ) as PollBody;
      expect(ahead).toMatchObject({ reset: { reason: 'ahead_of_last_seq' }, next: 5 });
    }
  });

  it('releases the held subscription when the client aborts', async () => {
    await start();
    await app.createOrder('lp-x');
    const ac = new AbortController();
    const held = get
      .h1('/v1/orders/lp-x/events?after=1&wait=30', ac.signal)
      .catch((e: unknown) => e);
    await waitFor(() => app.bus.subscriberCount('lp-x') === 1, 'request held');
    ac.abort();
    await held;
    await waitFor(() => app.bus.subscriberCount() === 0, 'subscriber count back to zero');

    const req = h2.request({
      ':path': '/v1/orders/lp-x/events?after=1&wait=30',
      ...app.authHeaders,
    });
    req.end();
    await waitFor(() => app.bus.subscriberCount('lp-x') === 1, 'h2 request held');
    req.close();
    await waitFor(() => app.bus.subscriberCount() === 0, 'h2 subscriber released');
  });
});
