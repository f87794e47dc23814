import { request } from 'undici';
import { OtlpReceiver } from '../support/otlp-receiver';
import { openSseH1 } from '../support/sse-stream';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WsStream } from '../support/websocket-stream';
import {
  callerContext,
  publishAndStore,
  traceOf,
  tracingEnv,
  writesByTransport,
} from './tracing-support';

/**
 * One instance on the in-memory store, carrying the payload domain: its REST publish is
 * traced like an order's (`publish` -> `store`, a child of the caller's `traceparent`),
 * and the fan-out, which the in-memory store runs inside its append, is recorded on the
 * `store` span instead of a `deliver` span of its own.
 */
describe('tracing a payload publish on one instance', () => {
  let receiver: OtlpReceiver;
  let app: TestApp;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    app = await startTestApp({ STREAM_DOMAIN: 'payload', ...tracingEnv(receiver, 'payload') });
  });
  afterAll(async () => {
    await app?.close();
    await receiver?.close();
  });

  function publish(streamId: string, headers: Record<string, string> = {}) {
    return request(`${app.httpUrl}/v1/streams/${streamId}/payload`, {
      method: 'POST',
      headers: { ...app.authHeaders, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ bytes: 16 }),
    });
  }

  it('a payload publish with a traceparent is publish -> store, with the fan-out on the store span', async () => {
    expect((await publish('p-1')).statusCode).toBe(201);
    const sse = await openSseH1(`${app.httpUrl}/v1/orders/p-1/stream?after=1`, app.authHeaders);
    const raw = await WsStream.open(
      `${app.httpUrl.replace(/^http/, 'ws')}/v1/orders/p-1/ws?after=1`,
      { headers: app.authHeaders },
    );
    try {
      await waitFor(() => app.bus.subscriberCount('p-1') === 2, 'both subscribed');
      const caller = callerContext();

      expect((await publish('p-1', { traceparent: caller.traceparent })).statusCode).toBe(201);
      await sse.waitFor((m) => m.some((e) => e.event === 'payload' && e.id === '2'), 'SSE');
      const delivered = () => raw.frames.some((f) => f.type === 'payload' && f.data.seq === 2);
      await waitFor(delivered, 'raw WebSocket delivery');

      const spans = await traceOf(
        receiver,
        caller.traceId,
        (s) => s.some((x) => x.name === 'publish') && s.some((x) => x.name === 'store'),
        'publish and store of the payload',
      );
      const expected = { orderId: 'p-1', kind: 'payload', store: 'memory', seq: 2 };
      const { store } = publishAndStore(spans, caller, expected);
      expect(store.attributes).toMatchObject({
        'order_status.subscribers': 2,
        'order_status.writes': 2,
      });
      expect(writesByTransport(store)).toEqual({ sse: 1, websocket: 1 });
      expect(spans.filter((s) => s.name === 'deliver')).toEqual([]);
    } finally {
      sse.close();
      raw.ws.close();
    }
  });
});
