import { OrderStatus } from '@app/order-domain';
import { OrderTracing } from '../../apps/order-status/src/tracing/order-tracing';
import { OtlpReceiver } from '../support/otlp-receiver';
import { openSseH1 } from '../support/sse-stream';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WsStream } from '../support/websocket-stream';
import { callerContext, restPublish, tracingEnv } from './tracing-support';

/**
 * Tracing off, the default: nothing is exported, whatever the caller sends, and no trace
 * context reaches a client. Off is also what OTEL_SDK_DISABLED=true and
 * OTEL_TRACES_EXPORTER=none make of a configured endpoint.
 */
describe('tracing off', () => {
  let receiver: OtlpReceiver;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it.each([
    ['no OTEL_* variable', {}],
    ['OTEL_SDK_DISABLED=true', { OTEL_SDK_DISABLED: 'true' }],
    ['OTEL_TRACES_EXPORTER=none', { OTEL_TRACES_EXPORTER: 'none' }],
  ])('%s: a traced publish exports nothing and clients see no trace context', async (_, env) => {
    const app = await startTestApp({
      ...(Object.keys(env).length > 0 ? tracingEnv(receiver, 'off') : {}),
      ...env,
    });
    apps.push(app);
    expect(app.app.get(OrderTracing).enabled).toBe(false);
    await app.createOrder('off-1');
    const sse = await openSseH1(`${app.httpUrl}/v1/orders/off-1/stream?after=1`, app.authHeaders);
    const raw = await WsStream.open(
      `${app.httpUrl.replace(/^http/, 'ws')}/v1/orders/off-1/ws?after=1`,
      { headers: app.authHeaders },
    );
    await waitFor(() => app.bus.subscriberCount('off-1') === 2, 'both subscribed');
    const caller = callerContext();

    const answer = await restPublish(app, 'off-1', OrderStatus.Paid, {
      traceparent: caller.traceparent,
      tracestate: 'vendor=opaque',
    });
    expect(answer.statusCode).toBe(201);
    await sse.waitFor(() => sse.events().length === 1, 'SSE delivery');
    await waitFor(() => raw.seqs().length === 1, 'raw WebSocket delivery');
    sse.close();
    raw.ws.close();
    await app.close();

    expect(receiver.exports).toBe(0);
    expect(receiver.rejected).toEqual([]);
    for (const text of [JSON.stringify(answer), sse.body(), JSON.stringify(raw.frames)]) {
      expect(text).not.toContain(caller.traceId);
      expect(text).not.toContain('traceparent');
      expect(text).not.toContain('vendor=opaque');
    }
  });
});
