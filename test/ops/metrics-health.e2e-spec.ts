import {
  credentials,
  loadPackageDefinition,
  type ServiceClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath as HEALTH_PROTO_PATH } from 'grpc-health-check';
import { request } from 'undici';
import { OrderStatus } from '@app/order-domain';
import { heapAllocatedBytes } from '../../apps/order-status/src/ops/metrics.service';
import { Readiness } from '../../apps/order-status/src/ops/readiness.service';
import { collect, orderStatusClient, type OrderStatusClient } from '../grpc/grpc-test-client';
import { bearer } from '../support/auth';
import { openSseH1, type SseStream } from '../support/sse-stream';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ClientPool, reached } from '../ws/orders-client';

/** Prometheus text → `name{labels}` → value (labels as printed, in prom-client's order). */
async function scrape(app: TestApp): Promise<Map<string, number>> {
  const res = await request(`${app.httpUrl}/metrics`, { headers: bearer() });
  const out = new Map<string, number>();
  for (const line of (await res.body.text()).split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

interface HealthClient {
  check(
    req: { service: string },
    cb: (err: ServiceError | null, res?: { status: string }) => void,
  ): void;
  close(): void;
}

function healthClient(address: string): HealthClient {
  const pkg = loadPackageDefinition(loadSync(HEALTH_PROTO_PATH, { enums: String })) as {
    grpc: { health: { v1: { Health: ServiceClientConstructor } } };
  };
  return new pkg.grpc.health.v1.Health(
    address,
    credentials.createInsecure(),
  ) as unknown as HealthClient;
}

function grpcHealth(client: HealthClient): Promise<string> {
  return new Promise((resolve, reject) =>
    client.check({ service: '' }, (err, res) => (err ? reject(err) : resolve(res?.status ?? ''))),
  );
}

async function getStatus(url: string): Promise<{ status: number; body: unknown }> {
  const res = await request(url, { headers: bearer() });
  return { status: res.statusCode, body: await res.body.json() };
}

describe('metrics over a scripted session on every transport', () => {
  let app: TestApp;
  let grpc: OrderStatusClient;
  const sockets = new ClientPool();
  const streams: SseStream[] = [];

  beforeEach(async () => {
    app = await startTestApp();
    grpc = orderStatusClient(app.grpcAddress);
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await sockets.closeAll();
    grpc.close();
    await app.close();
  });

  // V8's running allocation total: Node 26 reports it (the load test reads it per delivered
  // event), Node 20 does not, and then the metric is absent rather than a false 0.
  it('counts the bytes the heap allocated, where the runtime reports them', async () => {
    const reported = heapAllocatedBytes() !== undefined;
    const name = 'nodejs_heap_allocated_bytes_total';
    const first = await scrape(app);
    const objects = Array.from({ length: 10_000 }, (_, i) => ({ i, text: `order-${i}` }));
    const second = await scrape(app);
    if (!reported) {
      expect([first.has(name), second.has(name)]).toEqual([false, false]);
      return;
    }
    // At least the 10,000 objects and strings made between the two scrapes.
    expect((second.get(name) ?? 0) - (first.get(name) ?? 0)).toBeGreaterThan(objects.length * 32);
  });

  it('counts connections, subscriptions, deliveries, latency, queue depth and resumes per transport', async () => {
    await app.createOrder('m-all', OrderStatus.Paid);
    const before = await scrape(app);
    expect(before.get('order_store_up{backend="memory"}')).toBe(1);

    const sse = await openSseH1(`${app.httpUrl}/v1/orders/m-all/stream?after=1`);
    streams.push(sse);
    const ws = await sockets.connect(app.httpUrl);
    expect(await ws.subscribe('m-all', 2)).toMatchObject({ ok: true });
    const call = grpc.subscribe({ orderId: 'm-all', afterSeq: 2 });
    const items = collect(call).items;
    const poll = request(`${app.httpUrl}/v1/orders/m-all/events?after=2&wait=10`, {
      headers: bearer(),
    });
    await waitFor(() => app.bus.subscriberCount('m-all') === 4, 'four subscriptions');

    const open = await scrape(app);
    for (const t of ['sse', 'ws', 'grpc', 'long-poll']) {
      expect(open.get(`order_transport_connections{transport="${t}"}`)).toBe(1);
      expect(open.get(`order_bus_subscribers{transport="${t}"}`)).toBe(1);
      expect(open.get(`order_queue_depth{transport="${t}"}`)).toBe(0);
    }
    // SSE resumed after 1 (replaying seq 2); the others resumed at the last seq.
    expect(open.get('order_resumes_total')).toBe(4);

    await app.publish('m-all', OrderStatus.Packed);
    await app.publish('m-all', OrderStatus.Shipped);
    await sse.waitFor(() => sse.events().length === 3, 'sse events');
    await ws.until(reached('m-all', 4), 'ws events');
    await waitFor(() => items.length === 2, 'grpc events');
    // Both publishes land in one tick, so the held poll answers with both.
    expect(await (await poll).body.json()).toMatchObject({ next: 4 });

    const after = await scrape(app);
    expect(after.get('order_deliveries_total{transport="sse"}')).toBe(3);
    expect(after.get('order_deliveries_total{transport="ws"}')).toBe(2);
    expect(after.get('order_deliveries_total{transport="grpc"}')).toBe(2);
    expect(after.get('order_deliveries_total{transport="long-poll"}')).toBe(2);
    // Latency is recorded for live events only, not for SSE's replay of seq 2.
    expect(after.get('order_delivery_latency_seconds_count{transport="sse"}')).toBe(2);
    expect(after.get('order_delivery_latency_seconds_count{transport="ws"}')).toBe(2);
    expect(after.get('order_delivery_latency_seconds_count{transport="grpc"}')).toBe(2);
    expect(after.get('order_delivery_latency_seconds_count{transport="long-poll"}')).toBe(2);
    expect(
      after.get('order_delivery_latency_seconds_bucket{le="+Inf",transport="sse"}') ??
        after.get('order_delivery_latency_seconds_bucket{transport="sse",le="+Inf"}'),
    ).toBe(2);
    expect(after.get('order_delivery_latency_seconds_sum{transport="grpc"}')).toBeGreaterThan(0);
    expect(after.get('order_transport_connections{transport="long-poll"}')).toBe(0);
    expect(after.get('nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
    expect(after.has('nodejs_heap_size_used_bytes')).toBe(true);

    sse.close();
    await sockets.closeAll();
    call.cancel();
    await waitFor(() => app.bus.subscriberCount() === 0, 'every subscription released');
    const closed = await scrape(app);
    for (const t of ['sse', 'ws', 'grpc', 'long-poll']) {
      expect(closed.get(`order_transport_connections{transport="${t}"}`)).toBe(0);
    }
  });

  // order_auth_failures_total is caused by real refusals on every transport in
  // test/hardening/auth-failure-metrics.e2e-spec.ts.
});

describe('health probes', () => {
  let app: TestApp;
  let health: HealthClient;

  beforeEach(async () => {
    app = await startTestApp();
    health = healthClient(app.grpcAddress);
  });
  afterEach(async () => {
    health.close();
    await app.close();
  });

  it('is live and ready once started, on HTTP and on the gRPC health service', async () => {
    expect(await getStatus(`${app.httpUrl}/health/live`)).toMatchObject({ status: 200 });
    expect(await getStatus(`${app.httpUrl}/health/ready`)).toMatchObject({
      status: 200,
      body: { status: 'ok', info: { lifecycle: { status: 'up' }, store: { status: 'up' } } },
    });
    expect(await grpcHealth(health)).toBe('SERVING');
  });

  it('is not ready while the store is down, and ready again when it is back', async () => {
    const store = app.store as { health?: () => 'up' | 'down' };
    const original = store.health;
    store.health = () => 'down';
    const down = await getStatus(`${app.httpUrl}/health/ready`);
    expect(down).toMatchObject({ status: 503, body: { error: { store: { status: 'down' } } } });
    expect(await getStatus(`${app.httpUrl}/health/live`)).toMatchObject({ status: 200 });
    expect((await scrape(app)).get('order_store_up{backend="memory"}')).toBe(0);
    // gRPC health is pushed from a poll of the store's state.
    await waitFor(async () => (await grpcHealth(health)) === 'NOT_SERVING', 'gRPC NOT_SERVING');

    store.health = original;
    expect(await getStatus(`${app.httpUrl}/health/ready`)).toMatchObject({ status: 200 });
    await waitFor(async () => (await grpcHealth(health)) === 'SERVING', 'gRPC SERVING again');
  });

  it('is not ready once draining', async () => {
    app.app.get(Readiness).beginDrain();
    expect(await getStatus(`${app.httpUrl}/health/ready`)).toMatchObject({
      status: 503,
      body: { error: { lifecycle: { status: 'down', phase: 'draining' } } },
    });
    expect(await grpcHealth(health)).toBe('NOT_SERVING');
  });
});
