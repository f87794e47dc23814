import { Metadata } from '@grpc/grpc-js';
import { request } from 'undici';
import { OrderStatus, PROTO_STATUS } from '@app/order-domain';
import {
  collect,
  orderStatusClient,
  seqsOf,
  type OrderStatusClient,
} from '../grpc/grpc-test-client';
import { OtlpReceiver } from '../support/otlp-receiver';
import { RedisServer } from '../support/redis-server';
import { openSseH1 } from '../support/sse-stream';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WsStream } from '../support/websocket-stream';
import { ClientPool, reached } from '../ws/orders-client';
import {
  callerContext,
  only,
  publishAndStore,
  restPublish,
  SPAN_KIND,
  traceOf,
  tracingEnv,
  writesByTransport,
} from './tracing-support';

const TRANSPORTS = ['grpc', 'sse', 'ws', 'websocket', 'long-poll'];

/**
 * OpenTelemetry end to end: two instances on one real Redis export to an OTLP/HTTP
 * receiver in the test. A publish on A with the caller's `traceparent` and its deliveries
 * on B, on every transport, are one trace: publish -> store -> deliver.
 */
describe('tracing across two instances on Redis', () => {
  let redis: RedisServer;
  let receiver: OtlpReceiver;
  let a: TestApp;
  let b: TestApp;
  let grpcA: OrderStatusClient;
  let grpcB: OrderStatusClient;
  const pool = new ClientPool();
  const closers: (() => void)[] = [];

  beforeAll(async () => {
    redis = await RedisServer.launch();
    receiver = await OtlpReceiver.start();
    a = await startTestApp({ REDIS_URL: redis.url, ...tracingEnv(receiver, 'instance-a') });
    b = await startTestApp({ REDIS_URL: redis.url, ...tracingEnv(receiver, 'instance-b') });
    grpcA = orderStatusClient(a.grpcAddress);
    grpcB = orderStatusClient(b.grpcAddress);
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) close();
    await pool.closeAll();
  });
  afterAll(async () => {
    grpcA?.close();
    grpcB?.close();
    await a?.close();
    await b?.close();
    await receiver?.close();
    await redis?.shutdown();
  });

  /** B's subscribers of `orderId` on every transport, each waiting for seq `seq`. */
  async function followOnB(orderId: string, seq: number) {
    const grpc = collect(grpcB.subscribe({ orderId, afterSeq: 1 }));
    const sse = await openSseH1(`${b.httpUrl}/v1/orders/${orderId}/stream?after=1`, b.authHeaders);
    closers.push(() => sse.close());
    const io = await pool.connect(b.httpUrl);
    await io.subscribe(orderId, 1);
    const raw = await WsStream.open(
      `${b.httpUrl.replace(/^http/, 'ws')}/v1/orders/${orderId}/ws?after=1`,
      { headers: b.authHeaders },
    );
    closers.push(() => raw.ws.close());
    const poll = request(`${b.httpUrl}/v1/orders/${orderId}/events?after=1&wait=10`, {
      headers: b.authHeaders,
    }).then(async (res) => (await res.body.json()) as { events: { seq: number }[] });
    // Awaited below; a test that fails before then must not also leave it unhandled.
    poll.catch(() => undefined);
    // Five connections on a loaded 2-core CI host took more than the default 5 s.
    await waitFor(
      () => b.bus.subscriberCount(orderId) === TRANSPORTS.length,
      'B subscribed on every transport',
      20_000,
    );
    return {
      sse,
      raw,
      all: async () => {
        await waitFor(() => seqsOf(grpc.items).includes(seq), 'gRPC delivery');
        await sse.waitFor(() => sse.events().some((e) => e.seq === seq), 'SSE delivery');
        await io.until(reached(orderId, seq), 'socket.io delivery');
        await waitFor(() => raw.seqs().includes(seq), 'raw WebSocket delivery');
        expect((await poll).events.map((e) => e.seq)).toEqual([seq]);
      },
    };
  }

  it('a REST publish on A with a traceparent and its deliveries on B on every transport are one trace', async () => {
    await a.createOrder('t1');
    const followers = await followOnB('t1', 2);
    const caller = callerContext();

    const answer = await restPublish(a, 't1', OrderStatus.Paid, {
      traceparent: caller.traceparent,
      tracestate: 'vendor=opaque',
    });
    expect(answer.statusCode).toBe(201);
    await followers.all();

    const spans = await traceOf(
      receiver,
      caller.traceId,
      (s) => s.some((x) => x.name === 'deliver'),
      'publish, store and deliver of one trace',
    );
    const { store } = publishAndStore(spans, caller, {
      orderId: 't1',
      kind: 'status',
      store: 'redis',
      seq: 2,
      service: 'instance-a',
    });
    const deliver = only(spans, 'deliver', 'instance-b');
    expect(deliver).toMatchObject({ parentSpanId: store.spanId, kind: SPAN_KIND.consumer });
    expect(deliver.attributes).toMatchObject({
      'order_status.order_id': 't1',
      'order_status.seq': 2,
      'order_status.subscribers': TRANSPORTS.length,
      'order_status.writes': TRANSPORTS.length,
    });
    expect(writesByTransport(deliver)).toEqual(Object.fromEntries(TRANSPORTS.map((t) => [t, 1])));
    // A has no subscriber of t1: Redis routes the event to B only, and A delivers nothing.
    expect(spans.filter((s) => s.serviceName === 'instance-a' && s.name === 'deliver')).toEqual([]);

    // The trace context travels beside the event: clients see the event as ever.
    const keys = ['orderId', 'seq', 'status', 'previousStatus', 'publishedAtUs'];
    expect(Object.keys(answer.body)).toEqual(keys);
    expect(Object.keys(followers.sse.events()[0])).toEqual(keys);
    expect(Object.keys(followers.raw.of('status')[0])).toEqual(keys);
    expect(answer.headers.traceparent).toBeUndefined();
  });

  it('a gRPC publish carries the traceparent of its metadata to B', async () => {
    await a.createOrder('t2');
    const sse = await openSseH1(`${b.httpUrl}/v1/orders/t2/stream?after=1`, b.authHeaders);
    closers.push(() => sse.close());
    await waitFor(() => b.bus.subscriberCount('t2') === 1, 'B subscribed');
    const caller = callerContext();
    const metadata = new Metadata();
    metadata.set('traceparent', caller.traceparent);

    // grpc-js clients take per-call metadata before the callback (the test client's
    // interceptor adds the bearer token to it).
    const updateStatus = grpcA.updateStatus.bind(grpcA) as unknown as (
      req: { orderId: string; status: number },
      metadata: Metadata,
      cb: (err: Error | null) => void,
    ) => void;
    await new Promise<void>((resolve, reject) =>
      updateStatus({ orderId: 't2', status: PROTO_STATUS[OrderStatus.Paid] }, metadata, (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    await sse.waitFor(() => sse.events().some((e) => e.seq === 2), 'SSE delivery on B');

    const spans = await traceOf(
      receiver,
      caller.traceId,
      (s) => s.some((x) => x.name === 'deliver'),
      'the gRPC publish and its delivery',
    );
    const publish = only(spans, 'publish', 'instance-a');
    expect(publish).toMatchObject({ parentSpanId: caller.spanId, kind: SPAN_KIND.server });
    expect(publish.attributes['order_status.publish_api']).toBe('grpc');
    const store = only(spans, 'store', 'instance-a');
    const deliver = only(spans, 'deliver', 'instance-b');
    expect(store.parentSpanId).toBe(publish.spanId);
    expect(deliver.parentSpanId).toBe(store.spanId);
    expect(writesByTransport(deliver)).toEqual({ sse: 1 });
  });

  it('an unsampled caller (flags 00) is followed: nothing of its trace is exported', async () => {
    await a.createOrder('t3');
    const sse = await openSseH1(`${b.httpUrl}/v1/orders/t3/stream?after=1`, b.authHeaders);
    closers.push(() => sse.close());
    await waitFor(() => b.bus.subscriberCount('t3') === 1, 'B subscribed');
    const caller = callerContext();
    const exportsBefore = receiver.exports;
    await restPublish(a, 't3', OrderStatus.Paid, {
      traceparent: caller.traceparent.replace(/-01$/, '-00'),
    });
    await sse.waitFor(() => sse.events().some((e) => e.seq === 2), 'SSE delivery on B');
    // A sampled publish after it: once its spans are in, the unsampled one's would be too.
    const marker = callerContext();
    await restPublish(a, 't3', OrderStatus.Packed, { traceparent: marker.traceparent });
    await traceOf(receiver, marker.traceId, (s) => s.some((x) => x.name === 'deliver'), 'marker');
    expect(receiver.exports).toBeGreaterThan(exportsBefore);
    expect(receiver.spans.filter((s) => s.traceId === caller.traceId)).toEqual([]);
  });
});
