import { io, type Socket } from 'socket.io-client';
import { OrderStatus, publishStatus, publishTracking } from '@app/order-domain';
import { ORDERS_NAMESPACE } from '../../apps/order-status/src/transports/ws/orders-ws.events';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { AsyncApiDocument } from './asyncapi-document';

const ORDER = 'asyncapi-1';
const SSE = '/v1/orders/{orderId}/stream';
const POLL = '/v1/orders/{orderId}/events';
/** Past the order's last seq: every transport answers with a reset. */
const AHEAD = 100;
const WAIT_MS = 10_000;

/** Every frame of an SSE body that carries data: its event name and JSON. */
function sseMessages(body: string): [string, unknown][] {
  return body
    .split('\n\n')
    .map((frame) => {
      const fields = new Map<string, string>();
      for (const line of frame.split('\n')) {
        const at = line.indexOf(': ');
        if (at > 0) fields.set(line.slice(0, at), line.slice(at + 2));
      }
      return fields;
    })
    .filter((f) => f.has('data'))
    .map((f): [string, unknown] => [f.get('event') ?? 'message', JSON.parse(f.get('data') ?? '')]);
}

/*
 * What the running service really sends on each channel, validated against the
 * document: an order with status changes, a tracking update and a cancellation with a
 * reason (so the stream ends `completed`), read from the start and from past its end
 * (a reset). Complements asyncapi.e2e-spec.ts, which runs every item kind (skipped
 * included) through the encoders.
 */
describe('docs/asyncapi.yaml against the running service', () => {
  let app: TestApp;
  let api: AsyncApiDocument;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    api = await AsyncApiDocument.load();
    app = await startTestApp();
    await app.createOrder(ORDER, OrderStatus.Paid, OrderStatus.Packed, OrderStatus.Shipped);
    await publishTracking(app.store, {
      orderId: ORDER,
      location: { lat: 48.85, lon: 2.35 },
      etaMs: Date.now() + 3_600_000,
    });
    await publishStatus(app.store, {
      orderId: ORDER,
      status: OrderStatus.Cancelled,
      reason: 'lost',
    });
  });
  afterAll(async () => {
    for (const socket of sockets) socket.disconnect();
    await app.close();
  });

  function expectDocumented(address: string, received: [string, unknown][]): void {
    for (const [name, payload] of received) {
      expect([address, name, api.errors(address, name, payload)]).toEqual([address, name, []]);
    }
  }

  it('SSE: every frame is a documented message', async () => {
    const received: [string, unknown][] = [];
    for (const after of [0, AHEAD]) {
      const res = await fetch(`${app.httpUrl}/v1/orders/${ORDER}/stream?after=${after}`, {
        headers: app.authHeaders,
        signal: AbortSignal.timeout(WAIT_MS),
      });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      // The order is finished: the stream ends after its `end` frame.
      received.push(...sseMessages(await res.text()));
    }
    expect(new Set(received.map(([name]) => name))).toEqual(
      new Set(['status', 'tracking', 'reset', 'end']),
    );
    expectDocumented(SSE, received);
  });

  it('long-poll: every answer is a documented message', async () => {
    const received: [string, unknown][] = [];
    for (const after of [0, 2, AHEAD]) {
      const res = await fetch(`${app.httpUrl}/v1/orders/${ORDER}/events?after=${after}&wait=0`, {
        headers: app.authHeaders,
        signal: AbortSignal.timeout(WAIT_MS),
      });
      expect(res.status).toBe(200);
      received.push(['pollAnswer', await res.json()]);
    }
    expectDocumented(POLL, received);
    const kinds = received.flatMap(([, body]) => Object.keys(body as object));
    expect(kinds).toEqual(expect.arrayContaining(['events', 'reset', 'next', 'completed']));
  });

  it('socket.io: every event and ack is a documented message', async () => {
    const socket = io(`${app.httpUrl}${ORDERS_NAMESPACE}`, {
      auth: { token: app.defaultToken },
      transports: ['websocket'],
      reconnection: false,
    });
    sockets.push(socket);
    const received: [string, unknown][] = [];
    socket.onAny((name: string, payload: unknown) => received.push([name, payload]));
    const ends = () => received.filter(([name]) => name === 'end').length;

    received.push(['subscribeAck', await socket.emitWithAck('subscribe', { orderId: ORDER })]);
    await waitFor(() => ends() === 1, 'end of the first subscription', WAIT_MS);
    received.push([
      'subscribeAck',
      await socket.emitWithAck('subscribe', { orderId: ORDER, afterSeq: AHEAD }),
    ]);
    await waitFor(() => ends() === 2, 'end of the resumed subscription', WAIT_MS);
    received.push(['unsubscribeAck', await socket.emitWithAck('unsubscribe', { orderId: ORDER })]);
    // Refusals are acks too.
    received.push(['subscribeAck', await socket.emitWithAck('subscribe', { orderId: '-x' })]);
    received.push(['unsubscribeAck', await socket.emitWithAck('unsubscribe', {})]);

    expect(new Set(received.map(([name]) => name))).toEqual(
      new Set(['status', 'tracking', 'reset', 'end', 'subscribeAck', 'unsubscribeAck']),
    );
    expectDocumented(ORDERS_NAMESPACE, received);
  });
});
