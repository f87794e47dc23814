import { request } from 'undici';
import { ErrorCode, IDEMPOTENCY_KEY_MAX_LENGTH } from '@app/contracts';
import { OrderStatus } from '@app/order-domain';
import { bearer, testToken } from '../support/auth';
import { startTestApp, testTracking, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ClientPool } from '../ws/orders-client';

/** Small bounds, so a flood of a few hundred requests reaches each of them. */
const BOUNDS = {
  MEMORY_IDEMPOTENCY_KEYS_MAX_BYTES: 32_768,
  MEMORY_STREAM_TICKETS_MAX_BYTES: 16_384,
  MEMORY_VERIFIED_TOKENS_MAX_BYTES: 16_384,
  MEMORY_RATE_WINDOWS_MAX_BYTES: 16_384,
  MEMORY_WS_SUBSCRIPTIONS_MAX_BYTES: 16_384,
};
/** Requests in flight at once during a flood. */
const CONCURRENCY = 8;
/** One ETA for every update, so a retry carries the same body as its first request. */
const ETA_MS = Date.now() + 3_600_000;
const tracking = (i: number) => ({ ...testTracking(i), etaMs: ETA_MS });

/** `order_memory_*{structure}` as /metrics reports them. */
interface MemoryFigures {
  readonly bytes: number;
  readonly maxBytes: number;
  readonly entries: number;
  readonly evictions: number;
  readonly refusals: number;
}

async function memoryOf(app: TestApp, structure: string): Promise<MemoryFigures> {
  const res = await request(`${app.httpUrl}/metrics`, { headers: bearer() });
  const text = await res.body.text();
  const read = (name: string): number => {
    const m = new RegExp(`^${name}\\{structure="${structure}"\\} (\\d+)$`, 'm').exec(text);
    if (m === null) throw new Error(`/metrics has no ${name}{structure="${structure}"}`);
    return Number(m[1]);
  };
  return {
    bytes: read('order_memory_bytes'),
    maxBytes: read('order_memory_max_bytes'),
    entries: read('order_memory_entries'),
    evictions: read('order_memory_evictions_total'),
    refusals: read('order_memory_refusals_total'),
  };
}

/** Runs `send(0..count-1)` with CONCURRENCY in flight; the HTTP statuses, in order. */
async function flood(count: number, send: (i: number) => Promise<number>): Promise<number[]> {
  const statuses: number[] = new Array<number>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      statuses[i] = await send(i);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return statuses;
}

/** Sends and drains one JSON POST; the status and `Retry-After`. */
async function post(
  app: TestApp,
  path: string,
  token: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; retryAfter?: string }> {
  const res = await request(`${app.httpUrl}${path}`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  await res.body.dump();
  const retryAfter = res.headers['retry-after'];
  return {
    status: res.statusCode,
    retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
  };
}

describe('memory bounded in bytes under floods (issue 35)', () => {
  let app: TestApp;
  const pool = new ClientPool();

  beforeAll(async () => {
    app = await startTestApp({
      ...Object.fromEntries(Object.entries(BOUNDS).map(([k, v]) => [k, String(v)])),
      // Windows that outlive the test, so every principal of a flood stays counted.
      LIMIT_PUBLISH_PER_WINDOW: '1000000',
      LIMIT_PUBLISH_WINDOW_MS: '600000',
    });
    await app.createOrder('flood-1', OrderStatus.Paid, OrderStatus.Packed, OrderStatus.Shipped);
  });
  afterAll(async () => {
    await pool.closeAll();
    await app?.close();
  });

  it('distinct long Idempotency-Keys: the cache stays inside its bound and evicts the oldest', async () => {
    const keys = 400;
    const statuses = await flood(keys, async (i) => {
      const key = String(i).padStart(IDEMPOTENCY_KEY_MAX_LENGTH, 'k');
      const res = await post(app, '/v1/orders/flood-1/tracking', app.defaultToken, tracking(i), {
        'idempotency-key': key,
      });
      return res.status;
    });
    expect(statuses.filter((s) => s !== 201)).toEqual([]);
    const m = await memoryOf(app, 'idempotency_keys');
    expect(m.maxBytes).toBe(BOUNDS.MEMORY_IDEMPOTENCY_KEYS_MAX_BYTES);
    expect(m.bytes).toBeLessThanOrEqual(m.maxBytes);
    expect(m.bytes).toBeGreaterThan(m.maxBytes / 2);
    expect(m.entries + m.evictions).toBe(keys);
    // The newest key is still remembered: a retry of it replays, it does not publish again.
    const last = String(keys - 1).padStart(IDEMPOTENCY_KEY_MAX_LENGTH, 'k');
    const retry = await request(`${app.httpUrl}/v1/orders/flood-1/tracking`, {
      method: 'POST',
      headers: { ...app.authHeaders, 'content-type': 'application/json', 'idempotency-key': last },
      body: JSON.stringify(tracking(keys - 1)),
    });
    await retry.body.dump();
    expect(retry.headers['idempotent-replayed']).toBe('true');
  });

  it('stream tickets from many principals: refused at the bound with Retry-After, none dropped', async () => {
    const principals = 200;
    const answers: { status: number; retryAfter?: string }[] = [];
    await flood(principals, async (i) => {
      const res = await post(app, '/v1/stream-tickets', testToken({ sub: `ticket-flood-${i}` }), {
        orderId: 'flood-1',
      });
      answers.push(res);
      return res.status;
    });
    const issued = answers.filter((a) => a.status === 201).length;
    const refused = answers.filter((a) => a.status === 429);
    expect(issued + refused.length).toBe(principals);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    const m = await memoryOf(app, 'stream_tickets');
    expect(m.bytes).toBeLessThanOrEqual(m.maxBytes);
    expect(m).toMatchObject({ entries: issued, refusals: refused.length, evictions: 0 });
    // Every token of the flood was verified once: that cache stayed inside its bound too.
    const v = await memoryOf(app, 'verified_tokens');
    expect(v.bytes).toBeLessThanOrEqual(v.maxBytes);
    expect(v.evictions).toBeGreaterThan(0);
  });

  it('publishes from many principals: rate windows refused at the bound, with Retry-After', async () => {
    const principals = 200;
    const answers = await flood(principals, (i) =>
      post(
        app,
        '/v1/orders/flood-1/tracking',
        testToken({ sub: `rate-flood-${i}` }),
        tracking(i),
      ).then((r) => r.status),
    );
    const refused = answers.filter((s) => s === 429).length;
    expect(answers.filter((s) => s !== 201 && s !== 429)).toEqual([]);
    expect(refused).toBeGreaterThan(0);
    const m = await memoryOf(app, 'rate_windows');
    expect(m.bytes).toBeLessThanOrEqual(m.maxBytes);
    expect(m.refusals).toBe(refused);
    expect(m.evictions).toBe(0);
  });

  it('socket.io subscriptions over many sockets: refused at the bound with retry advice, open ones kept', async () => {
    const orderIds = Array.from({ length: 10 }, (_, i) => `ws-flood-${i}`);
    for (const id of orderIds) await app.createOrder(id);
    const sockets = await Promise.all(Array.from({ length: 4 }, () => pool.connect(app.httpUrl)));
    const acks = await Promise.all(sockets.flatMap((c) => orderIds.map((id) => c.subscribe(id))));
    const open = acks.filter((a) => a.ok).length;
    const refused = acks.filter((a) => !a.ok);
    expect(open).toBeGreaterThan(0);
    expect(refused.length).toBe(acks.length - open);
    for (const r of refused) {
      expect(r).toMatchObject({ ok: false, error: { code: ErrorCode.ResourceExhausted } });
      expect(!r.ok && r.error.retryAfterMs).toBeGreaterThanOrEqual(1_000);
    }
    const m = await memoryOf(app, 'ws_subscriptions');
    expect(m.bytes).toBeLessThanOrEqual(m.maxBytes);
    expect(m).toMatchObject({ entries: open, refusals: refused.length, evictions: 0 });
    expect(app.bus.subscriberCount()).toBe(open);
    // Every socket leaving gives every byte back.
    await pool.closeAll();
    await waitFor(
      async () => (await memoryOf(app, 'ws_subscriptions')).bytes === 0,
      'ws_subscriptions back to 0 bytes once the sockets left',
    );
  });
});
