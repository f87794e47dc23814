import { status as GrpcCode, type ServiceError } from '@grpc/grpc-js';
import { bearer } from '../support/auth';
import { request } from 'undici';
import { OrderStatus, PROTO_STATUS } from '@app/order-domain';
import {
  collect,
  orderStatusClient,
  seqsOf,
  unary,
  type Collected,
  type OrderStatusClient,
} from '../grpc/grpc-test-client';
import { openSseH1, type SseStream } from '../support/sse-stream';
import { RedisServer } from '../support/redis-server';
import { TcpGate } from '../support/tcp-gate';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ClientPool, ended, timeline, type RecordingClient } from '../ws/orders-client';

const { Created, Paid, Shipped, Delivered } = OrderStatus;
const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);
/** Publishes during an outage must fail within this (fail fast, no offline queue). */
const FAIL_FAST_MS = 1_500;

/** One subscriber per streaming transport, all on instance B. */
interface Subscribers {
  sse: SseStream;
  grpc: Collected;
  ws: RecordingClient;
}

/**
 * Redis stops mid-stream and comes back, with and without its data. Subscriber instance
 * B reaches Redis through a gate the test keeps shut until publishing instance A is back
 * (and, with the data kept, has published more), so events published after the restart
 * reach B only through its catch-up from Redis history. The order of the two reconnects
 * is the test's decision, not a race between their backoffs: under CPU load B's backoff
 * once ended early enough for B to be back before A.
 */
describe.each([
  ['keeping its data', true],
  ['without its data', false],
])('Redis restarts %s', (_label, persistent) => {
  let redis: RedisServer;
  let a: TestApp;
  let b: TestApp;
  let gateB: TcpGate;
  let grpcA: OrderStatusClient;
  let grpcB: OrderStatusClient;
  const pool = new ClientPool();
  let sse: SseStream | undefined;

  beforeEach(async () => {
    redis = await RedisServer.launch({ persistent });
    a = await startTestApp({ REDIS_URL: redis.url, REDIS_RECONNECT_MAX_DELAY_MS: '20' });
    gateB = await TcpGate.listen(redis.port);
    b = await startTestApp({
      REDIS_URL: `redis://127.0.0.1:${gateB.port}`,
      REDIS_RECONNECT_MAX_DELAY_MS: '100',
    });
    grpcA = orderStatusClient(a.grpcAddress);
    grpcB = orderStatusClient(b.grpcAddress);
  });
  afterEach(async () => {
    sse?.close();
    await pool.closeAll();
    grpcA.close();
    grpcB.close();
    await a.close();
    await b.close();
    await gateB.close();
    await redis.shutdown();
  });

  const subscribeOnB = async (orderId: string, afterSeq: number): Promise<Subscribers> => {
    sse = await openSseH1(`${b.httpUrl}/v1/orders/${orderId}/stream?after=${afterSeq}`);
    const grpc = collect(grpcB.subscribe({ orderId, afterSeq }), 30_000);
    const ws = await pool.connect(b.httpUrl);
    await ws.subscribe(orderId, afterSeq);
    return { sse, grpc, ws };
  };

  const publishViaRest = (orderId: string, status: OrderStatus) =>
    request(`${a.httpUrl}/v1/orders/${orderId}/status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer() },
      body: JSON.stringify({ status }),
    });

  /** Stops Redis and checks the outage behaviour: fast 503/UNAVAILABLE, streams up, not ready. */
  const outage = async (orderId: string, subs: Subscribers) => {
    await redis.stop();
    await waitFor(() => a.store.health?.() === 'down', 'A to see the outage');
    await waitFor(() => b.store.health?.() === 'down', 'B to see the outage');

    let started = Date.now();
    const res = await publishViaRest(orderId, Shipped);
    expect(res.statusCode).toBe(503);
    expect(await res.body.json()).toMatchObject({ error: { code: 'unavailable' } });
    expect(Date.now() - started).toBeLessThan(FAIL_FAST_MS);

    started = Date.now();
    const err = (await unary(grpcA.updateStatus.bind(grpcA), {
      orderId,
      status: PROTO_STATUS[Shipped],
    }).catch((e: unknown) => e)) as ServiceError;
    expect(err.code).toBe(GrpcCode.UNAVAILABLE);
    // The shared publish rate limit, checked first, lives in the same Redis.
    expect(err.details).toMatch(/(order store|rate limits) unavailable/);
    expect(Date.now() - started).toBeLessThan(FAIL_FAST_MS);

    // Open streams stay up through the outage.
    expect(subs.ws.socket.connected).toBe(true);
    expect(timeline(subs.ws.received, orderId).some((t) => t.startsWith('end'))).toBe(false);
    expect(subs.sse.messages.some((m) => m.event === 'end')).toBe(false);
  };

  it(
    persistent
      ? 'zero loss: B backfills what was published while it reconnected, nothing twice'
      : 'an explicit reset on every transport, then the order published anew flows',
    async () => {
      await a.createOrder('r1', Paid); // seqs 1, 2
      const subs = await subscribeOnB('r1', 0);
      await waitFor(() => seqsOf(subs.grpc.items).length === 2, 'replay on B');
      await a.publish('r1', Shipped); // 3, live before the outage
      await subs.sse.waitFor(() => subs.sse.events().length === 3, 'seq 3 on B');

      await outage('r1', subs);
      gateB.shut(); // B stays cut off after the restart until the test opens the gate
      await redis.start();
      await waitFor(() => a.store.health?.() === 'up', 'A back', 10_000);
      expect(b.store.health?.()).toBe('down');

      if (persistent) {
        // Published while B is still cut off: B gets these from Redis history only.
        for (let i = 0; i < 5; i++) await a.track('r1'); // 4..8
        gateB.open();
        await waitFor(() => b.store.health?.() === 'up', 'B back', 10_000);
        await a.publish('r1', Delivered); // 9, live
        await subs.sse.ended;
        const all = range(1, 9);
        expect(subs.sse.events().map((e) => e.seq)).toEqual(all);
        expect(subs.sse.messages.filter((m) => m.event === 'reset')).toEqual([]);
        expect((await subs.grpc.status).code).toBe(GrpcCode.OK);
        expect(seqsOf(subs.grpc.items)).toEqual(all);
        expect(subs.grpc.items.filter((m) => 'reset' in m && m.reset)).toEqual([]);
        await subs.ws.until(ended('r1'), 'socket.io end');
        expect(subs.ws.events('r1').map((e) => e.seq)).toEqual(all);
        expect(subs.ws.received.filter((r) => r.type === 'reset')).toEqual([]);
        // The interesting path really ran: B resynced after A had published.
        expect(b.bus.stats.storeResyncs).toBeGreaterThanOrEqual(1);
        expect(b.bus.stats.eventsBackfilled).toBeGreaterThanOrEqual(5);
      } else {
        // A re-created the epoch; B, back now, sees a data set it did not know.
        gateB.open();
        await waitFor(() => b.store.health?.() === 'up', 'B back', 10_000);
        // Every subscriber is told, explicitly, that its history is gone.
        await subs.sse.waitFor((m) => m.some((x) => x.event === 'reset'), 'SSE reset');
        const reset = JSON.parse(
          subs.sse.messages.find((m) => m.event === 'reset')?.data ?? '{}',
        ) as { reason: string; snapshot: { lastSeq: number } };
        expect(reset).toMatchObject({ reason: 'gap', snapshot: { lastSeq: 0 } });
        await waitFor(() => subs.grpc.items.some((m) => 'reset' in m && m.reset), 'gRPC reset');
        await subs.ws.until((r) => r.some((x) => x.type === 'reset'), 'socket.io reset');
        expect(b.bus.stats.storeDataLost).toBe(1);

        // The order starts over in the new data set; the streams carry on from 0.
        await a.publish('r1', Created);
        await a.publish('r1', Delivered);
        await subs.sse.ended;
        expect(subs.sse.events().map((e) => e.seq)).toEqual([1, 2, 3, 1, 2]);
        expect((await subs.grpc.status).code).toBe(GrpcCode.OK);
        expect(seqsOf(subs.grpc.items)).toEqual([1, 2, 3, 1, 2]);
        await subs.ws.until(ended('r1'), 'socket.io end');
        expect(timeline(subs.ws.received, 'r1')).toEqual([
          'ack:2',
          '1:created',
          '2:paid',
          '3:shipped',
          'reset:gap:0',
          '1:created',
          '2:delivered',
          'end:completed',
        ]);
      }
      await waitFor(() => b.bus.subscriberCount() === 0, 'B released every subscription');
    },
  );
});
