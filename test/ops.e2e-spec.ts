import { OrderStatus } from '@app/order-domain';
import { request } from 'undici';
import { startTestApp, type TestApp } from './support/test-app';

describe('ops routes', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  it('GET /health reports the bus', async () => {
    const res = await request(`${app.httpUrl}/health`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toMatchObject({ status: 'ok', subscribers: 0 });
  });

  it('GET /metrics exposes bus and process metrics in Prometheus text format', async () => {
    await app.createOrder('m-1', OrderStatus.Paid);
    const res = await request(`${app.httpUrl}/metrics`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    const text = await res.body.text();
    expect(text).toContain('order_events_ingested_total 2');
    // The embedded store is not routed: nothing reaches the bus that it does not keep.
    expect(text).toContain('order_events_not_served_total 0');
    expect(text).toContain('nodejs_eventloop_lag_p99_seconds');
    expect(text).toMatch(/order_queue_overflows_total\{policy="conflate"\} 0/);
  });
});
