import { request } from 'undici';
import { status as GrpcCode, type ServiceError } from '@grpc/grpc-js';
import { PAYLOAD_DOMAIN, type PayloadEvent } from '@app/payload-domain';
import { watchOrder, type OrderWatch, type TransportName, type WatchItem } from '@app/client/node';
import { orderStatusClient, unary } from '../grpc/grpc-test-client';
import { RedisServer } from '../support/redis-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const DOMAIN = PAYLOAD_DOMAIN;

/** Every transport: gRPC carries the payload in its own `SubscribeResponse` arm. */
const TRANSPORTS: readonly TransportName[] = ['sse', 'ws', 'websocket', 'longpoll', 'grpc'];

/**
 * The service carrying the load test's payload domain (STREAM_DOMAIN=payload), on both
 * stores: published through its own REST route, followed with the client library on
 * every transport that has its wire names, in order and resumable by seq.
 */
describe.each(['in-memory', 'redis'] as const)('the payload domain served live (%s)', (store) => {
  let redis: RedisServer | undefined;
  let app: TestApp;
  const watches: OrderWatch[] = [];

  beforeAll(async () => {
    if (store === 'redis') redis = await RedisServer.launch();
    app = await startTestApp({
      STREAM_DOMAIN: 'payload',
      ...(redis !== undefined ? { REDIS_URL: redis.url } : {}),
    });
  });
  afterEach(async () => {
    for (const w of watches.splice(0)) {
      w.close();
      await w.done;
    }
  });
  afterAll(async () => {
    await app?.close();
    await redis?.shutdown();
  });

  async function publish(orderId: string, bytes: number, key?: string) {
    const res = await request(`${app.httpUrl}/v1/streams/${orderId}/payload`, {
      method: 'POST',
      headers: {
        ...app.authHeaders,
        'content-type': 'application/json',
        ...(key !== undefined ? { 'idempotency-key': key } : {}),
      },
      body: JSON.stringify({ bytes }),
    });
    const body = (await res.body.json()) as PayloadEvent & { code?: string };
    return { status: res.statusCode, body, replayed: res.headers['idempotent-replayed'] };
  }

  function follow(transport: TransportName, orderId: string, after = 0) {
    const items: WatchItem[] = [];
    const watch = watchOrder(orderId, {
      transport,
      baseUrl: transport === 'grpc' ? app.grpcAddress : app.httpUrl,
      token: app.defaultToken,
      domain: DOMAIN,
      longPollWaitS: 5,
      after,
    });
    watches.push(watch);
    void (async () => {
      for await (const item of watch) items.push(item);
    })();
    const payloads = () =>
      items.flatMap((i) => (i.kind === 'event' ? [i.event as unknown as PayloadEvent] : []));
    return { watch, items, payloads };
  }

  it('publishes payloads on their own route, with the order routes not mounted', async () => {
    const first = await publish(`${store}-p`, 32, 'k-1');
    expect(first.status).toBe(201);
    expect(Object.keys(first.body)).toEqual(['orderId', 'seq', 'publishedAtUs', 'payload']);
    expect(first.body).toMatchObject({ orderId: `${store}-p`, seq: 1 });
    expect(first.body.payload).toHaveLength(32);
    const again = await publish(`${store}-p`, 32, 'k-1');
    expect([again.status, again.body.seq, again.replayed]).toEqual([201, 1, 'true']);
    expect((await publish(`${store}-p`, -1)).status).toBe(400);
    const order = await request(`${app.httpUrl}/v1/orders/${store}-p/status`, {
      method: 'POST',
      headers: { ...app.authHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'created' }),
    });
    expect(order.statusCode).toBe(404);
    await order.body.dump();
  });

  async function call(method: string, path: string, body?: object) {
    const res = await request(`${app.httpUrl}${path}`, {
      method: method as 'GET',
      headers:
        body === undefined
          ? app.authHeaders
          : { ...app.authHeaders, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  }

  it("runs the load test's steady schedule in process, and reads a stream's last seq", async () => {
    const prefix = `${store}-sim`;
    const schedule = { orders: 2, ratePerOrder: 50, payloadBytes: 40, prefix, autoStart: false };
    const refused = await call('PUT', '/v1/admin/simulator', { ...schedule, payloadBytes: -1 });
    expect(refused.status).toBe(400);
    const prepared = await call('PUT', '/v1/admin/simulator', schedule);
    expect([prepared.status, prepared.body.state, prepared.body.published]).toEqual([
      200,
      'ready',
      2,
    ]);
    expect((await call('GET', `/v1/streams/${prefix}-2`)).body).toMatchObject({ lastSeq: 1 });
    const { watch, payloads } = follow('sse', `${prefix}-1`);
    expect((await call('POST', '/v1/admin/simulator/start')).body.state).toBe('running');
    await waitFor(() => watch.cursor >= 4, 'the schedule publishing', 10_000);
    expect((await call('POST', '/v1/admin/simulator/stop')).body.state).toBe('stopped');
    const last = (await call('GET', `/v1/streams/${prefix}-1`)).body.lastSeq as number;
    await waitFor(() => watch.cursor === last, 'every published payload delivered', 10_000);
    expect(payloads().map((e) => e.seq)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    expect(new Set(payloads().map((e) => e.payload.length))).toEqual(new Set([40]));
  });

  it.each(TRANSPORTS)('follows a stream over %s: history, live, in order', async (transport) => {
    const id = `${store}-${transport}-live`;
    for (const bytes of [1, 2, 3]) expect((await publish(id, bytes)).status).toBe(201);
    const { watch, payloads } = follow(transport, id);
    await waitFor(() => watch.cursor === 3, 'the history delivered', 10_000);
    for (const bytes of [4, 5]) await publish(id, bytes);
    await waitFor(() => watch.cursor === 5, 'the live events delivered', 10_000);
    expect(payloads().map((e) => [e.seq, e.payload.length])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
      [5, 5],
    ]);
  });

  it.each(TRANSPORTS)('resumes by seq over %s with no gap and no duplicate', async (transport) => {
    const id = `${store}-${transport}-resume`;
    for (let i = 1; i <= 4; i++) await publish(id, i);
    const { watch, payloads } = follow(transport, id, 2);
    await waitFor(() => watch.cursor === 4, 'the events after 2 delivered', 10_000);
    watch.reconnect();
    await publish(id, 5);
    await waitFor(() => watch.cursor === 5, 'the event published across the reconnect', 10_000);
    expect(payloads().map((e) => e.seq)).toEqual([3, 4, 5]);
  });

  it.each(TRANSPORTS)('resets a resume point past the stream over %s', async (transport) => {
    const id = `${store}-${transport}-reset`;
    for (const bytes of [1, 2]) await publish(id, bytes);
    const { watch, items } = follow(transport, id, 9);
    const reset = await waitFor(() => items.find((i) => i.kind === 'reset'), 'the reset', 10_000);
    expect(reset.kind === 'reset' && reset.reset.snapshot).toMatchObject({
      orderId: id,
      lastSeq: 2,
    });
    expect(watch.cursor).toBe(2);
  });

  it('answers the snapshot over gRPC with GetPayloadStream; GetOrder is the order domain’s', async () => {
    const id = `${store}-snapshot`;
    for (const bytes of [8, 8]) await publish(id, bytes);
    const client = orderStatusClient(app.grpcAddress);
    const code = (call: Promise<unknown>) =>
      call.then(
        () => GrpcCode.OK,
        (err: ServiceError) => err.code,
      );
    try {
      expect(await unary(client.getPayloadStream.bind(client), { orderId: id })).toMatchObject({
        orderId: id,
        lastSeq: 2,
      });
      expect(await code(unary(client.getPayloadStream.bind(client), { orderId: 'none' }))).toBe(
        GrpcCode.NOT_FOUND,
      );
      expect(await code(unary(client.getOrder.bind(client), { orderId: id }))).toBe(
        GrpcCode.UNIMPLEMENTED,
      );
    } finally {
      client.close();
    }
  });
});
