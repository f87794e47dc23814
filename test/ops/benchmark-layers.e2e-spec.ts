import { request } from 'undici';
import { OrderStatus } from '@app/order-domain';
import { ConnectionLog } from '../../apps/order-status/src/ops/connection-log';
import { orderStatusClient, unary, type OrderStatusClient } from '../grpc/grpc-test-client';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * BENCHMARK_LAYERS_OFF (the load test's ladder) really takes each layer out of the running
 * service, on every path a request can take: no token needed over HTTP or gRPC (yet a
 * missing order is still 404), no DTO validation, no connection log lines at info, and
 * no per-delivery or default metrics. The refusals in production: benchmark-config.spec.ts.
 */
describe('benchmark layer switches', () => {
  let app: TestApp;
  let client: OrderStatusClient;

  beforeAll(async () => {
    app = await startTestApp({
      BENCHMARK_LAYERS_OFF: 'auth,validation,request-log,metrics',
      LOG_LEVEL: 'info',
    });
    client = orderStatusClient(app.grpcAddress, {}, null);
    await app.createOrder('bench-1', OrderStatus.Paid);
  });
  afterAll(async () => {
    client.close();
    await app.close();
  });

  it('serves HTTP and gRPC without credentials, and a missing order is still 404', async () => {
    const poll = await request(`${app.httpUrl}/v1/orders/bench-1/events?after=0&wait=0`);
    expect(poll.statusCode).toBe(200);
    await poll.body.dump();
    const missing = await request(`${app.httpUrl}/v1/orders/no-such-order`);
    expect(missing.statusCode).toBe(404);
    await missing.body.dump();
    const order = await unary(client.getOrder.bind(client), { orderId: 'bench-1' });
    expect(order).toMatchObject({ orderId: 'bench-1' });
  });

  it('lets a body through that the ValidationPipe refuses (an unknown field)', async () => {
    const res = await request(`${app.httpUrl}/v1/stream-tickets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId: 'bench-1', unexpected: 1 }),
    });
    expect(res.statusCode).toBe(201);
    await res.body.dump();
  });

  it('writes no connection lines and keeps no per-delivery or default metrics', async () => {
    expect(app.app.get(ConnectionLog).enabled).toBe(false);
    const res = await request(`${app.httpUrl}/metrics`);
    const text = await res.body.text();
    expect(res.statusCode).toBe(200);
    expect(text).toContain('order_deliveries_total');
    expect(text).not.toContain('nodejs_eventloop_lag_p99_seconds');
    expect(text).not.toMatch(/^order_delivery_latency_seconds_count\{/m);
  });
});
