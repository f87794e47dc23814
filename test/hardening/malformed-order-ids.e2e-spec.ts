import { status as GrpcCode } from '@grpc/grpc-js';
import { request } from 'undici';
import { ErrorCode, type ErrorBody } from '@app/contracts';
import { collect, orderStatusClient, type OrderStatusClient } from '../grpc/grpc-test-client';
import { startTestApp, type TestApp } from '../support/test-app';
import { ClientPool } from '../ws/orders-client';

/** Every HTTP route that takes an order id in its path. */
const ROUTES = [
  { method: 'GET', suffix: '' },
  { method: 'GET', suffix: '/stream' },
  { method: 'GET', suffix: '/events' },
  { method: 'POST', suffix: '/status' },
] as const;

/** Malformed ids: too long (the sizes the adversarial pass tried), bad characters, encoded junk. */
const BAD_IDS = [
  'x'.repeat(65),
  'y'.repeat(150),
  'z'.repeat(5_000),
  '-leading-dash',
  'has.dot',
  '%E2%9C%93',
  '%ZZ',
];

/**
 * A malformed order id is a typed 400 (414 at most for an over-long URL) on every route,
 * with or without a token, before any auth decision, and the answer never echoes it.
 */
describe('malformed order ids', () => {
  let app: TestApp;
  let grpc: OrderStatusClient;
  const pool = new ClientPool();

  beforeAll(async () => {
    app = await startTestApp();
    grpc = orderStatusClient(app.grpcAddress);
  });
  afterAll(async () => {
    grpc.close();
    await pool.closeAll();
    await app.close();
  });

  for (const { method, suffix } of ROUTES) {
    for (const token of [true, false]) {
      it(`${method} /v1/orders/:bad${suffix} ${token ? 'with' : 'without'} a token`, async () => {
        for (const id of BAD_IDS) {
          const res = await request(`${app.httpUrl}/v1/orders/${id}${suffix}`, {
            method,
            headers: {
              ...(token ? app.authHeaders : {}),
              'content-type': 'application/json',
            },
            ...(method === 'POST' ? { body: JSON.stringify({ status: 'paid' }) } : {}),
          });
          const text = await res.body.text();
          // 414 only for a URL too long to route at all.
          const allowed = res.statusCode === 400 || (id.length > 1_000 && res.statusCode === 414);
          expect([id.slice(0, 20), res.statusCode, allowed]).toEqual([
            id.slice(0, 20),
            res.statusCode,
            true,
          ]);
          const body = JSON.parse(text) as ErrorBody;
          expect(body.error.code).toBe(ErrorCode.InvalidArgument);
          expect(text).not.toContain(id.slice(0, 20));
        }
      });
    }
  }

  it('an unknown route is a 404 that does not echo the path', async () => {
    const junk = 'q'.repeat(150);
    const res = await request(`${app.httpUrl}/v1/nope/${junk}`, { headers: app.authHeaders });
    const text = await res.body.text();
    expect(res.statusCode).toBe(404);
    expect((JSON.parse(text) as ErrorBody).error.code).toBe(ErrorCode.NotFound);
    expect(text).not.toContain(junk.slice(0, 20));
  });

  it('gRPC Subscribe and GetOrder: INVALID_ARGUMENT without echo', async () => {
    for (const id of BAD_IDS) {
      const c = collect(grpc.subscribe({ orderId: id, afterSeq: 0 }));
      const st = await c.status;
      expect([id.slice(0, 20), st.code]).toEqual([id.slice(0, 20), GrpcCode.INVALID_ARGUMENT]);
      expect(st.details).not.toContain(id.slice(0, 20));
      const err = await new Promise<{ code: number; details: string }>((resolve) =>
        grpc.getOrder({ orderId: id }, {}, (e) => resolve(e as never)),
      );
      expect(err.code).toBe(GrpcCode.INVALID_ARGUMENT);
      expect(err.details).not.toContain(id.slice(0, 20));
    }
  });

  it('socket.io subscribe: invalid_argument ack without echo', async () => {
    const client = await pool.connect(app.httpUrl);
    for (const id of BAD_IDS) {
      const ack = await client.subscribe(id);
      expect(ack).toMatchObject({ ok: false, error: { code: ErrorCode.InvalidArgument } });
      expect(JSON.stringify(ack)).not.toContain(id.slice(0, 20));
    }
  });
});
