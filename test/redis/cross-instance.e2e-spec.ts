import { status as GrpcCode } from '@grpc/grpc-js';
import { bearer } from '../support/auth';
import { request } from 'undici';
import { OrderStatus, type OrderEvent } from '@app/order-domain';
import {
  collect,
  orderStatusClient,
  seqsOf,
  type OrderStatusClient,
} from '../grpc/grpc-test-client';
import { openSseH1, type SseStream } from '../support/sse-stream';
import { RedisServer } from '../support/redis-server';
import { startTestApp, type Step, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ClientPool, ended, timeline } from '../ws/orders-client';

const { Paid, Packed, Shipped, OutForDelivery, Delivered } = OrderStatus;
const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

interface PollBody {
  events: { seq: number }[];
  reset?: unknown;
  next: number;
  completed: boolean;
}

/** Follows an order by long-poll until it completes; returns every seq seen, in order. */
async function longPollAll(baseUrl: string, orderId: string, after = 0): Promise<number[]> {
  const seqs: number[] = [];
  for (let i = 0; i < 200; i++) {
    const res = await request(`${baseUrl}/v1/orders/${orderId}/events?after=${after}&wait=5`, {
      headers: bearer(),
    });
    if (res.statusCode === 204) {
      await res.body.dump();
      continue;
    }
    const body = (await res.body.json()) as PollBody;
    if (body.reset !== undefined) throw new Error(`unexpected reset: ${JSON.stringify(body)}`);
    seqs.push(...body.events.map((e) => e.seq));
    after = body.next;
    if (body.completed) return seqs;
  }
  throw new Error(`long-poll of ${orderId} did not complete: ${seqs.join(',')}`);
}

/**
 * Two service instances on one private Redis: what is published on one reaches the
 * subscribers of the other on every transport, resumes work across instances, and
 * concurrent publishes through both keep seqs unique and gap-free.
 */
describe('two instances sharing Redis', () => {
  let redis: RedisServer;
  let a: TestApp;
  let b: TestApp;
  let grpcB: OrderStatusClient;
  const pool = new ClientPool();
  const streams: SseStream[] = [];

  beforeAll(async () => {
    redis = await RedisServer.launch();
    a = await startTestApp({ REDIS_URL: redis.url });
    // A small ring on B: resumes from further back must be served from Redis history.
    b = await startTestApp({ REDIS_URL: redis.url, BUS_RING_SIZE: '4' });
    grpcB = orderStatusClient(b.grpcAddress);
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await pool.closeAll();
  });
  afterAll(async () => {
    grpcB?.close();
    await a?.close();
    await b?.close();
    await redis?.shutdown();
  });

  const sse = async (app: TestApp, path: string, headers?: Record<string, string>) => {
    const s = await openSseH1(`${app.httpUrl}${path}`, headers);
    streams.push(s);
    return s;
  };

  it('publish on A: subscribers on B get everything in order on SSE, long-poll, socket.io and gRPC', async () => {
    await a.createOrder('x1');
    const sseB = await sse(b, '/v1/orders/x1/stream');
    const grpc = collect(grpcB.subscribe({ orderId: 'x1', afterSeq: 0 }));
    const ws = await pool.connect(b.httpUrl);
    await ws.subscribe('x1', 0);
    const polled = longPollAll(b.httpUrl, 'x1');
    await sseB.waitFor((m) => m.some((x) => x.event === 'status'), 'the replayed created event');
    await waitFor(() => grpc.items.length === 1, 'gRPC replay');

    const script: Step[] = [
      Paid,
      Packed,
      Shipped,
      OutForDelivery,
      ...Array.from({ length: 19 }, () => 'tracking' as const),
      Delivered,
    ];
    for (const s of script) await (s === 'tracking' ? a.track('x1') : a.publish('x1', s));
    const all = range(1, script.length + 1);

    await sseB.ended;
    expect(sseB.events().map((e) => e.seq)).toEqual(all);
    expect((await grpc.status).code).toBe(GrpcCode.OK);
    expect(seqsOf(grpc.items)).toEqual(all);
    await ws.until(ended('x1'), 'socket.io end');
    expect(timeline(ws.received, 'x1')).toEqual([
      'ack:1',
      ...all.map(
        (seq) =>
          `${seq}:${seq === all.length ? 'delivered' : seq === 1 ? 'created' : script[seq - 2]}`,
      ),
      'end:completed',
    ]);
    expect(await polled).toEqual(all);
    await waitFor(() => b.bus.subscriberCount() === 0, 'B released every subscription');
  });

  it('resume on B from the last seq seen on A: nothing lost, nothing twice', async () => {
    await a.createOrder('x2', Paid);
    const onA = await sse(a, '/v1/orders/x2/stream');
    await onA.waitFor((m) => m.filter((x) => x.event === 'status').length === 2, 'two events on A');
    const lastSeen = onA.events().at(-1)?.seq as number;
    onA.close();
    // Published while the client is between instances; B's 4-event ring cannot cover
    // them all, so B reads Redis history.
    await a.publish('x2', Shipped);
    for (let i = 0; i < 7; i++) await a.track('x2');

    const sseB = await sse(b, '/v1/orders/x2/stream', { 'last-event-id': String(lastSeen) });
    const grpc = collect(grpcB.subscribe({ orderId: 'x2', afterSeq: lastSeen }));
    await a.publish('x2', Delivered);
    await sseB.ended;
    expect(sseB.events().map((e) => e.seq)).toEqual(range(lastSeen + 1, 11));
    expect((await grpc.status).code).toBe(GrpcCode.OK);
    expect(seqsOf(grpc.items)).toEqual(range(lastSeen + 1, 11));
    expect(await longPollAll(b.httpUrl, 'x2', lastSeen)).toEqual(range(lastSeen + 1, 11));
  });

  it('concurrent REST publishes to one order through both instances: unique, gap-free seqs', async () => {
    await a.createOrder('x3', Shipped);
    const sseB = await sse(b, '/v1/orders/x3/stream?after=2');
    const post = (app: TestApp, i: number) =>
      request(`${app.httpUrl}/v1/orders/x3/tracking`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer() },
        body: JSON.stringify({ location: { lat: 1, lon: 2 }, etaMs: i }),
      }).then(async (res) => {
        expect(res.statusCode).toBe(201);
        return (await res.body.json()) as OrderEvent;
      });
    const published = await Promise.all(range(1, 60).map((i) => post(i % 2 ? a : b, i)));
    const seqs = published.map((e) => e.seq).sort((x, y) => x - y);
    expect(seqs).toEqual(range(3, 62));
    await sseB.waitFor(() => sseB.events().length === 60, 'all 60 events on B');
    expect(sseB.events().map((e) => e.seq)).toEqual(range(3, 62));
  });

  it('the same status through both instances at once: one event, the rest 409', async () => {
    await a.createOrder('x4');
    const post = (app: TestApp) =>
      request(`${app.httpUrl}/v1/orders/x4/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer() },
        body: JSON.stringify({ status: Paid }),
      }).then(async (res) => {
        await res.body.dump();
        return res.statusCode;
      });
    const codes = await Promise.all(range(1, 10).map((i) => post(i % 2 ? a : b)));
    expect(codes.filter((c) => c === 201)).toHaveLength(1);
    expect(codes.filter((c) => c === 409)).toHaveLength(9);
    expect(await a.store.getSnapshot('x4')).toMatchObject({ lastSeq: 2, status: Paid });
  });
});
