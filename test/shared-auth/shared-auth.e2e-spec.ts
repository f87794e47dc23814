import { status as GrpcCode } from '@grpc/grpc-js';
import { request } from 'undici';
import { ErrorCode, type ErrorBody } from '@app/contracts';
import { OrderStatus } from '@app/order-domain';
import { Attempts } from '../auth/attempts';
import { collect, orderStatusClient, type OrderStatusClient } from '../grpc/grpc-test-client';
import { bearer } from '../support/auth';
import { RedisServer } from '../support/redis-server';
import { openSseH1, type SseStream } from '../support/sse-stream';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** A ticket from `app` for `orderId`, with `token` (default: the support token). */
async function ticketFrom(app: TestApp, orderId: string, token?: string): Promise<string> {
  const res = await request(`${app.httpUrl}/v1/stream-tickets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(token) },
    body: JSON.stringify({ orderId }),
  });
  expect(res.statusCode).toBe(201);
  return ((await res.body.json()) as { ticket: string }).ticket;
}

/**
 * Two instances on one private Redis share their auth state: a stream ticket issued by
 * one is redeemed, once, by the other; a principal's open streams are counted across
 * both; the publish rate limit counts publishes through both in one bucket.
 */
describe('auth state shared by two instances', () => {
  let redis: RedisServer;
  let a: TestApp;
  let b: TestApp;
  let attemptsA: Attempts;
  let attemptsB: Attempts;
  const streams: SseStream[] = [];
  const grpcClients: OrderStatusClient[] = [];

  beforeAll(async () => {
    redis = await RedisServer.launch();
    const env = {
      REDIS_URL: redis.url,
      LIMIT_CONNECTIONS_PER_PRINCIPAL: '3',
      LIMIT_PUBLISH_PER_WINDOW: '4',
      LIMIT_PUBLISH_WINDOW_MS: '60000',
    };
    a = await startTestApp(env);
    b = await startTestApp(env);
    attemptsA = new Attempts(a);
    attemptsB = new Attempts(b);
  });
  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
    for (const c of grpcClients.splice(0)) c.close();
  });
  afterAll(async () => {
    await attemptsA?.close();
    await attemptsB?.close();
    await a?.close();
    await b?.close();
    await redis?.shutdown();
  });

  const sse = async (app: TestApp, path: string, headers?: Record<string, string>) => {
    const s = await openSseH1(`${app.httpUrl}${path}`, headers);
    streams.push(s);
    return s;
  };

  it('a ticket issued on A opens a stream on B once, and is spent on A too', async () => {
    await a.createOrder('t1');
    const ticket = await ticketFrom(a, 't1');
    const noAuth = { authorization: '' };

    const onB = await sse(b, `/v1/orders/t1/stream?ticket=${ticket}`, noAuth);
    expect(onB.status).toBe(200);
    await onB.waitFor((m) => m.some((x) => x.event === 'status'), 'the created event on B');

    for (const app of [a, b]) {
      const again = await sse(app, `/v1/orders/t1/stream?ticket=${ticket}`, noAuth);
      await again.ended;
      expect(again.status).toBe(401);
      expect(JSON.parse(again.body())).toMatchObject({
        error: { code: 'unauthenticated', message: 'stream ticket unknown, used or expired' },
      });
    }
  });

  it('a ticket from B is single use on A even when presented four times at once', async () => {
    await a.createOrder('t2');
    const ticket = await ticketFrom(b, 't2');
    const path = `/v1/orders/t2/stream?ticket=${ticket}`;
    const tries = await Promise.all([1, 2, 3, 4].map(() => sse(a, path, { authorization: '' })));
    expect(tries.map((s) => s.status).sort()).toEqual([200, 401, 401, 401]);
  });

  it('counts a principal’s streams across A and B: 2 on A + 1 on B, the next refused on either', async () => {
    await a.createOrder('c1');
    const token = a.token({ sub: 'counted', scopes: ['orders:read:any'] });
    const auth = { authorization: `Bearer ${token}` };
    const s1 = await sse(a, '/v1/orders/c1/stream', auth);
    const s2 = await sse(a, '/v1/orders/c1/stream', auth);
    const grpcB = orderStatusClient(b.grpcAddress, {}, token);
    grpcClients.push(grpcB);
    const onB = collect(grpcB.subscribe({ orderId: 'c1', afterSeq: 0 }));
    await waitFor(() => onB.items.length === 1, 'the gRPC stream on B is open');
    expect([s1.status, s2.status]).toEqual([200, 200]);

    for (const [attempts, transport] of [
      [attemptsB, 'sse'],
      [attemptsA, 'grpc-subscribe'],
      [attemptsB, 'ws-websocket'],
      [attemptsA, 'long-poll'],
    ] as const) {
      const outcome = await attempts.run(transport, 'c1', token);
      expect([transport, outcome.code]).toEqual([transport, ErrorCode.ResourceExhausted]);
    }
    const refused = await sse(b, '/v1/orders/c1/stream', auth);
    await refused.ended;
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('5');

    // A slot given back on A can be taken on B.
    s1.close();
    await waitFor(async () => {
      const outcome = await attemptsB.run('sse', 'c1', token);
      return outcome.code === 'ok';
    }, 'a slot freed on A is free on B');
    // Someone else is not affected by that principal's count.
    expect((await attemptsB.run('sse', 'c1', b.defaultToken)).code).toBe('ok');
  });

  it('counts publishes through A and B (REST and gRPC) against one rate limit', async () => {
    const writer = a.token({ sub: 'rated', scopes: ['orders:read:any', 'orders:write'] });
    const publish = (app: TestApp, status: OrderStatus) =>
      request(`${app.httpUrl}/v1/orders/r1/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(writer) },
        body: JSON.stringify({ status }),
      });
    const codes: number[] = [];
    for (const [app, status] of [
      [a, OrderStatus.Created],
      [b, OrderStatus.Paid],
      [a, OrderStatus.Packed],
      [b, OrderStatus.Shipped],
    ] as const) {
      const res = await publish(app, status);
      await res.body.dump();
      codes.push(res.statusCode);
    }
    expect(codes).toEqual([201, 201, 201, 201]);
    for (const app of [a, b]) {
      const res = await publish(app, OrderStatus.Delivered);
      const body = (await res.body.json()) as ErrorBody;
      expect(res.statusCode).toBe(429);
      expect(body.error.code).toBe(ErrorCode.ResourceExhausted);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    const grpc = await attemptsA.run('grpc-publish', 'r1', writer);
    expect(grpc.status).toBe(GrpcCode.RESOURCE_EXHAUSTED);
    // Another publisher has its own bucket (its tracking update is not refused for the rate).
    expect((await attemptsB.run('publish', 'r1', b.defaultToken)).code).not.toBe(
      ErrorCode.ResourceExhausted,
    );
  });
});
