import type { Socket } from 'socket.io-client';
import { ErrorCode } from '@app/contracts';
import { OrderStatus } from '@app/order-domain';
import { DEFAULT_SUBSCRIPTIONS_PER_SOCKET as MAX_SUBSCRIPTIONS_PER_SOCKET } from '../../apps/order-status/src/config/auth-config';
import { startTestApp, type TestApp } from '../support/test-app';
import { once, waitFor } from '../support/wait-for';
import {
  ACK_TIMEOUT_MS,
  ClientPool,
  reached,
  type RecordingClient,
  type TransportName,
} from './orders-client';

/** The same socket without the typed event map, to send what a typed client cannot. */
function untyped(c: RecordingClient): Socket {
  return c.socket;
}

describe('socket.io /orders: bad input and limits', () => {
  let app: TestApp;
  let healthy: RecordingClient;
  let seq: number;
  const pool = new ClientPool();

  /** Publishes on the healthy client's order and waits until that client has it. */
  async function healthyStillReceives(): Promise<void> {
    const e = await app.publish('h-1', OrderStatus.Shipped);
    seq = e.seq;
    await healthy.until(reached('h-1', seq), `healthy client receives seq ${seq}`);
  }

  beforeEach(async () => {
    app = await startTestApp();
    await app.createOrder('h-1', OrderStatus.Paid);
    healthy = await pool.connect(app.httpUrl);
    await healthy.subscribe('h-1');
  });

  afterEach(async () => {
    await pool.closeAll();
    await app.close();
  });

  it('answers bad subscribe payloads with typed error acks, and the socket stays usable', async () => {
    await app.createOrder('ok-1');
    const c = await pool.connect(app.httpUrl);
    const raw = untyped(c);
    const ask = (...args: unknown[]) =>
      raw.timeout(ACK_TIMEOUT_MS).emitWithAck('subscribe', ...args) as Promise<unknown>;
    const invalid = { ok: false, error: { code: ErrorCode.InvalidArgument } };

    expect(await ask({ orderId: 'nope-1' })).toEqual({
      ok: false,
      error: { code: ErrorCode.NotFound, message: 'order nope-1 not found' },
    });
    expect(await ask({ orderId: 'bad id!' })).toMatchObject(invalid);
    expect(await ask({ orderId: 'x'.repeat(65) })).toMatchObject(invalid);
    expect(await ask({ orderId: 42 })).toMatchObject(invalid);
    expect(await ask({})).toMatchObject(invalid);
    for (const afterSeq of [-1, 'abc', 1.5, '5', Number.MAX_SAFE_INTEGER + 2]) {
      expect(await ask({ orderId: 'ok-1', afterSeq })).toMatchObject({
        ok: false,
        error: { code: ErrorCode.InvalidArgument, message: expect.stringContaining('afterSeq') },
      });
    }
    for (const payload of ['ok-1', 42, null, [{ orderId: 'ok-1' }], true]) {
      expect(await ask(payload)).toMatchObject({
        ok: false,
        error: { code: ErrorCode.InvalidArgument, message: 'subscribe payload must be an object' },
      });
    }
    expect(await ask({ orderId: 'ok-1', extra: 1 })).toMatchObject(invalid);
    // No payload at all (only the ack callback).
    expect(await ask()).toMatchObject(invalid);
    expect(
      await raw.timeout(ACK_TIMEOUT_MS).emitWithAck('unsubscribe', { orderId: '../etc' }),
    ).toMatchObject(invalid);

    // Nothing leaked, and the same socket still subscribes fine.
    expect(app.bus.subscriberCount()).toBe(1);
    expect(await c.subscribe('ok-1')).toEqual({ ok: true, orderId: 'ok-1', lastSeq: 1 });
    await c.until(reached('ok-1', 1), 'ok-1 replay');
    await healthyStillReceives();
  });

  it('a message without an ack callback is handled (or ignored) without harm', async () => {
    await app.createOrder('na-1');
    const c = await pool.connect(app.httpUrl);
    const raw = untyped(c);

    raw.emit('subscribe', { orderId: 'bad id!' });
    raw.emit('subscribe', 'not an object');
    raw.emit('subscribe');
    raw.emit('unsubscribe', 7);
    raw.emit('subscribe', { orderId: 'nope-2' });
    // A valid subscribe without ack still subscribes: the events arrive.
    raw.emit('subscribe', { orderId: 'na-1' });
    await c.until(reached('na-1', 1), 'na-1 events without an ack');
    await app.publish('na-1', OrderStatus.Paid);
    await c.until(reached('na-1', 2), 'na-1 live event');

    expect(c.socket.connected).toBe(true);
    expect(app.bus.subscriberCount()).toBe(2);
    await healthyStillReceives();
  });

  it(`refuses more than ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions on one socket`, async () => {
    const ids = Array.from({ length: MAX_SUBSCRIPTIONS_PER_SOCKET + 1 }, (_, i) => `lim-${i}`);
    for (const id of ids) await app.createOrder(id);
    const c = await pool.connect(app.httpUrl);

    const acks = await Promise.all(ids.slice(0, -1).map((id) => c.subscribe(id)));
    expect(acks.every((a) => a.ok)).toBe(true);
    expect(await c.subscribe(ids[ids.length - 1])).toMatchObject({
      ok: false,
      error: { code: ErrorCode.ResourceExhausted },
    });
    // Replacing an existing subscription is not a new one.
    expect(await c.subscribe(ids[0], 1)).toMatchObject({ ok: true });
    // Freeing a slot lets the next one in.
    await c.unsubscribe(ids[1]);
    expect(await c.subscribe(ids[ids.length - 1])).toMatchObject({ ok: true });
    expect(app.bus.subscriberCount()).toBe(MAX_SUBSCRIPTIONS_PER_SOCKET + 1); // + healthy
    await healthyStillReceives();
  });

  it.each<TransportName>(['websocket', 'polling'])(
    'an oversized message over %s disconnects that socket only',
    async (transport) => {
      await app.createOrder('big-1');
      const victim = await pool.connect(app.httpUrl, { transport });
      await victim.subscribe('big-1');
      await victim.subscribe('h-1');
      expect(app.bus.subscriberCount()).toBe(3);
      const disconnected = once<string>(victim.socket, 'disconnect');

      // WS_MAX_HTTP_BUFFER_BYTES defaults to 16 KiB: engine.io closes the connection.
      untyped(victim).emit('subscribe', { orderId: 'big-1', padding: 'x'.repeat(64 * 1024) });

      expect(await disconnected).toMatch(/transport (close|error)/);
      await waitFor(() => app.bus.subscriberCount() === 1, 'victim subscriptions released');
      await waitFor(() => app.bus.stats.connectionsByTransport.get('ws') === 1, 'one connection');
      expect(healthy.socket.connected).toBe(true);
      await healthyStillReceives();
    },
  );
});
