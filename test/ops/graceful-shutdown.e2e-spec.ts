import { status as GrpcCode } from '@grpc/grpc-js';
import { request } from 'undici';
import { OrderStatus } from '@app/order-domain';
import {
  collect,
  orderStatusClient,
  seqsOf,
  type OrderStatusClient,
} from '../grpc/grpc-test-client';
import { bearer, DEFAULT_TEST_TOKEN } from '../support/auth';
import { openSseH1, type SseStream } from '../support/sse-stream';
import { waitFor } from '../support/wait-for';
import { ClientPool, reached, type RecordingClient } from '../ws/orders-client';
import { logLines, spawnService, type ServiceProcess } from './service-process';

const DRAIN_MS = 4_000;
const JITTER_MS = 1_000;
const HISTORY = [OrderStatus.Created, OrderStatus.Paid, OrderStatus.Packed];

async function publish(service: ServiceProcess, orderId: string, status: OrderStatus) {
  const res = await request(`${service.httpUrl}/v1/orders/${orderId}/status`, {
    method: 'POST',
    headers: { ...bearer(), 'content-type': 'application/json' },
    body: JSON.stringify({ status }),
  });
  expect(res.statusCode).toBe(201);
  await res.body.dump();
}

async function subscribers(service: ServiceProcess): Promise<number> {
  const res = await request(`${service.httpUrl}/metrics`, { headers: bearer() });
  const text = await res.body.text();
  return [...text.matchAll(/^order_bus_subscribers\{[^}]*\} (\d+)$/gm)].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
}

/**
 * SIGTERM against the production build with a stream open on every transport: each
 * client is told to reconnect (with a jittered delay), the process exits well within the
 * drain deadline, and each client resumes from its last seq on a fresh instance (where,
 * without Redis, the order is re-created with the same history).
 */
describe('graceful shutdown on SIGTERM', () => {
  const services: ServiceProcess[] = [];
  const sockets = new ClientPool();
  const streams: SseStream[] = [];
  const grpcClients: OrderStatusClient[] = [];

  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await sockets.closeAll();
    for (const c of grpcClients.splice(0)) c.close();
    for (const s of services.splice(0)) {
      s.kill();
      await s.exited;
    }
  });

  async function start(): Promise<ServiceProcess> {
    const s = await spawnService({
      SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
      SHUTDOWN_RECONNECT_JITTER_MS: String(JITTER_MS),
    });
    services.push(s);
    for (const status of HISTORY) await publish(s, 'sd-1', status);
    return s;
  }

  it('advises every client to reconnect, exits within the deadline, and clients resume elsewhere', async () => {
    const a = await start();
    const sse = await openSseH1(`${a.httpUrl}/v1/orders/sd-1/stream?after=3`);
    streams.push(sse);
    const ws: RecordingClient = await sockets.connect(a.httpUrl);
    expect(await ws.subscribe('sd-1', 3)).toMatchObject({ ok: true });
    const grpcA = orderStatusClient(a.grpcAddress);
    grpcClients.push(grpcA);
    const call = collect(grpcA.subscribe({ orderId: 'sd-1', afterSeq: 3 }));
    await waitFor(async () => (await subscribers(a)) === 3, 'three streams open');
    await publish(a, 'sd-1', OrderStatus.Shipped);
    await sse.waitFor(() => sse.events().length === 1, 'sse got seq 4');
    await ws.until(reached('sd-1', 4), 'ws got seq 4');
    await waitFor(() => call.items.length === 1, 'grpc got seq 4');
    const poll = request(`${a.httpUrl}/v1/orders/sd-1/events?after=4&wait=30`, {
      headers: bearer(),
    });
    await waitFor(async () => (await subscribers(a)) === 4, 'long-poll held');

    const signalledAt = performance.now();
    a.child.kill('SIGTERM');

    // SSE: a jittered `retry:` right before `end {reason: shutdown}`, then the stream ends.
    await sse.ended;
    const tail = sse.messages.slice(-2);
    expect(tail[1]).toMatchObject({ event: 'end' });
    expect(tail[0].retry).toBeGreaterThanOrEqual(100);
    expect(tail[0].retry).toBeLessThan(100 + JITTER_MS);
    // The same advice in the data, for clients that cannot read `retry:`.
    expect(JSON.parse(tail[1].data)).toEqual({
      reason: 'shutdown',
      retryAfterMs: tail[0].retry,
    });
    // socket.io: `end` with its own reconnect advice, then the connection closes.
    await ws.until((r) => r.some((x) => x.type === 'end'), 'ws end');
    const end = ws.received.find((x) => x.type === 'end');
    expect(end).toMatchObject({ end: { orderId: 'sd-1', reason: 'shutdown' } });
    const advice = end?.type === 'end' ? (end.end.retryAfterMs ?? -1) : -1;
    expect(advice).toBeGreaterThanOrEqual(100);
    expect(advice).toBeLessThan(100 + JITTER_MS);
    await waitFor(() => !ws.socket.connected, 'socket.io disconnected');
    // gRPC: UNAVAILABLE, which clients retry.
    const st = await call.status;
    expect(st.code).toBe(GrpcCode.UNAVAILABLE);
    expect(st.details).toContain('shutdown');
    // long-poll: answered at once, with Retry-After.
    const polled = await poll;
    expect(polled.statusCode).toBe(204);
    expect(Number(polled.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    expect(await a.exited).toBe(0);
    const tookMs = performance.now() - signalledAt;
    expect(tookMs).toBeLessThan(DRAIN_MS);

    // One line per connection opened and closed, with transport, principal and duration;
    // the bearer token never appears in the log.
    const closed = logLines(a, 'connection closed');
    expect(new Set(closed.map((l) => l.transport))).toEqual(
      new Set(['sse', 'ws', 'grpc', 'long-poll']),
    );
    for (const l of closed) {
      expect(typeof l.durationMs).toBe('number');
      // gRPC authenticates inside its handler; the closing line still names the caller.
      expect([l.transport, l.principal]).toEqual([l.transport, 'support']);
    }
    expect(a.lines.join('\n')).not.toContain(DEFAULT_TEST_TOKEN);
    expect(logLines(a, 'connection opened')).toHaveLength(4);

    // A second instance; without Redis it knows the order only once re-created.
    const b = await start();
    await publish(b, 'sd-1', OrderStatus.Shipped);
    const sse2 = await openSseH1(`${b.httpUrl}/v1/orders/sd-1/stream`, {
      'last-event-id': String(sse.events().at(-1)?.seq),
    });
    streams.push(sse2);
    const ws2 = await sockets.connect(b.httpUrl);
    expect(await ws2.subscribe('sd-1', 4)).toMatchObject({ ok: true });
    const grpcB = orderStatusClient(b.grpcAddress);
    grpcClients.push(grpcB);
    const call2 = collect(
      grpcB.subscribe({ orderId: 'sd-1', afterSeq: seqsOf(call.items).at(-1) }),
    );
    await waitFor(async () => (await subscribers(b)) === 3, 'resumed on the second instance');
    await publish(b, 'sd-1', OrderStatus.OutForDelivery);
    await sse2.waitFor(() => sse2.events().length === 1, 'sse resumed');
    await ws2.until(reached('sd-1', 5), 'ws resumed');
    await waitFor(() => call2.items.length === 1, 'grpc resumed');
    expect(sse2.events().map((e) => e.seq)).toEqual([5]);
    expect(ws2.statuses('sd-1').map((e) => e.seq)).toEqual([5]);
    expect(seqsOf(call2.items)).toEqual([5]);
    const res = await request(`${b.httpUrl}/v1/orders/sd-1/events?after=4&wait=0`, {
      headers: bearer(),
    });
    expect(await res.body.json()).toMatchObject({
      events: [{ seq: 5, status: OrderStatus.OutForDelivery }],
      next: 5,
    });
  });
});
