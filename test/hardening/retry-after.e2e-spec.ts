import { Metadata, status as GrpcCode, type StatusObject } from '@grpc/grpc-js';
import { request } from 'undici';
import { ErrorCode, StreamEndTrailer } from '@app/contracts';
import { OrderStatus } from '@app/order-domain';
import { collect, orderStatusClient, type OrderStatusClient } from '../grpc/grpc-test-client';
import { openSseH1, type SseStream } from '../support/sse-stream';
import { startTestApp, type TestApp } from '../support/test-app';
import { ClientPool } from '../ws/orders-client';

/** A Retry-After header in whole seconds, at least 1. */
function retryAfterS(headers: Record<string, string | string[] | undefined>): number {
  return Number(headers['retry-after']);
}

/**
 * Every 429 / RESOURCE_EXHAUSTED says when to come back: `Retry-After` (seconds) on HTTP,
 * a `retry-after-ms` trailer on gRPC, `retryAfterMs` in socket.io's error data.
 */
describe('retry advice on resource_exhausted', () => {
  let app: TestApp;
  let grpc: OrderStatusClient;
  const pool = new ClientPool();
  const streams: SseStream[] = [];

  beforeAll(async () => {
    app = await startTestApp({
      LIMIT_CONNECTIONS_PER_PRINCIPAL: '1',
      LIMIT_PUBLISH_PER_WINDOW: '1',
      LIMIT_PUBLISH_WINDOW_MS: '30000',
    });
    grpc = orderStatusClient(app.grpcAddress, {}, null);
    await app.createOwnedOrder('ra-1', 'alice');
  });
  afterAll(async () => {
    for (const s of streams.splice(0)) s.close();
    await pool.closeAll();
    grpc.close();
    await app.close();
  });

  it('connection limit: every transport advises when to retry', async () => {
    const alice = app.token({ sub: 'alice', scopes: ['orders:read'] });
    const auth = { authorization: `Bearer ${alice}` };
    const first = await openSseH1(`${app.httpUrl}/v1/orders/ra-1/stream`, auth);
    streams.push(first);
    expect(first.status).toBe(200);

    const sse = await openSseH1(`${app.httpUrl}/v1/orders/ra-1/stream`, auth);
    streams.push(sse);
    await sse.ended;
    expect(sse.status).toBe(429);
    expect(retryAfterS(sse.headers)).toBeGreaterThanOrEqual(1);

    const poll = await request(`${app.httpUrl}/v1/orders/ra-1/events?wait=0`, { headers: auth });
    expect(poll.statusCode).toBe(429);
    expect(retryAfterS(poll.headers)).toBeGreaterThanOrEqual(1);
    expect(await poll.body.json()).toMatchObject({
      error: { code: ErrorCode.ResourceExhausted, retryAfterMs: expect.any(Number) },
    });

    const md = new Metadata();
    md.set('authorization', auth.authorization);
    const call = collect(
      (grpc.subscribe.bind(grpc) as unknown as (r: object, m: Metadata) => never)(
        { orderId: 'ra-1', afterSeq: 0 },
        md,
      ),
    );
    const st: StatusObject = await call.status;
    expect(st.code).toBe(GrpcCode.RESOURCE_EXHAUSTED);
    expect(Number(st.metadata.get(StreamEndTrailer.RetryAfterMs)[0])).toBeGreaterThan(0);

    const refused = await pool.connect(app.httpUrl, { token: alice }).then(
      () => undefined,
      (err: { data?: { code: string; retryAfterMs?: number } }) => err.data,
    );
    expect(refused).toMatchObject({
      code: ErrorCode.ResourceExhausted,
      retryAfterMs: expect.any(Number),
    });
  });

  it('publish rate: REST Retry-After and the gRPC trailer within the window', async () => {
    const publish = () =>
      request(`${app.httpUrl}/v1/orders/ra-2/status`, {
        method: 'POST',
        headers: { ...app.authHeaders, 'content-type': 'application/json' },
        body: JSON.stringify({ status: OrderStatus.Created }),
      });
    expect((await publish()).statusCode).toBe(201);
    const limited = await publish();
    expect(limited.statusCode).toBe(429);
    const seconds = retryAfterS(limited.headers);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(30);
    await limited.body.dump();

    const md = new Metadata();
    md.set('authorization', app.authHeaders.authorization);
    const err = await new Promise<{ code: number; metadata: Metadata }>((resolve) =>
      (
        grpc.updateStatus.bind(grpc) as unknown as (
          r: object,
          m: Metadata,
          cb: (e: unknown) => void,
        ) => void
      )({ orderId: 'ra-2', status: 2 }, md, (e) => resolve(e as never)),
    );
    expect(err.code).toBe(GrpcCode.RESOURCE_EXHAUSTED);
    const ms = Number(err.metadata.get(StreamEndTrailer.RetryAfterMs)[0]);
    expect(ms).toBeGreaterThan(0);
    expect(ms).toBeLessThanOrEqual(30_000);
  });
});
