import { ResetReason } from '@app/contracts';
import { OrderStatus } from '@app/order-domain';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ClientPool, ended, reached, timeline, type TransportName } from './orders-client';

const { Created, Paid, Packed, Shipped, OutForDelivery, Delivered } = OrderStatus;

const repeat = <T>(x: T, n: number): T[] => Array.from({ length: n }, () => x);

describe('socket.io /orders: delivery, resume and subscriptions', () => {
  let app: TestApp | undefined;
  const pool = new ClientPool();
  const start = async (env: Record<string, string> = {}): Promise<TestApp> =>
    (app = await startTestApp(env));

  afterEach(async () => {
    await pool.closeAll();
    await app?.close();
    app = undefined;
  });

  describe.each<[TransportName, 'http' | 'https']>([
    ['websocket', 'http'],
    ['polling', 'http'],
    ['websocket', 'https'],
    ['polling', 'https'],
  ])('over %s on the %s port', (transport, scheme) => {
    it('delivers a scripted sequence complete and in order, ack first, then end completed', async () => {
      const app = await start();
      await app.createOrder('o-1', Paid);
      const url = scheme === 'http' ? app.httpUrl : app.httpsUrl;
      const c = await pool.connect(url, { transport, ca: app.tlsCert });
      expect(c.socket.io.engine.transport.name).toBe(transport);

      expect(await c.subscribe('o-1')).toEqual({ ok: true, orderId: 'o-1', lastSeq: 2 });
      for (const s of [Packed, Shipped, 'tracking', OutForDelivery, Delivered] as const) {
        await (s === 'tracking' ? app.track('o-1') : app.publish('o-1', s));
      }
      await c.until(ended('o-1'), 'end of o-1');

      expect(timeline(c.received, 'o-1')).toEqual([
        'ack:2',
        '1:created',
        '2:paid',
        '3:packed',
        '4:shipped',
        '5:tracking',
        '6:out_for_delivery',
        '7:delivered',
        'end:completed',
      ]);
      await waitFor(() => app.bus.subscriberCount() === 0, 'subscription released after end');
    });
  });

  it('resumes from a middle seq: the rest arrives, nothing twice', async () => {
    const app = await start();
    await app.createOrder('o-2', Paid, Packed, Shipped);
    const c = await pool.connect(app.httpUrl);

    expect(await c.subscribe('o-2', 2)).toEqual({ ok: true, orderId: 'o-2', lastSeq: 4 });
    await app.publish('o-2', Delivered);
    await c.until(ended('o-2'), 'end of o-2');

    expect(timeline(c.received, 'o-2')).toEqual([
      'ack:4',
      '3:packed',
      '4:shipped',
      '5:delivered',
      'end:completed',
    ]);
  });

  it('resuming a finished order at its last seq ends at once with completed', async () => {
    const app = await start();
    await app.createOrder('o-3', Delivered);
    const c = await pool.connect(app.httpUrl);

    await c.subscribe('o-3', 2);
    await c.until(ended('o-3'), 'end of o-3');
    expect(timeline(c.received, 'o-3')).toEqual(['ack:2', 'end:completed']);
  });

  it('a resume point older than retention gets a reset with the snapshot, then live events', async () => {
    const app = await start({ BUS_RING_SIZE: '4' });
    // seq 1..8; the ring keeps 5..8.
    await app.createOrder('o-4', Paid, Packed, Shipped, ...repeat<'tracking'>('tracking', 4));
    const c = await pool.connect(app.httpUrl);

    await c.subscribe('o-4', 2);
    await c.until((r) => r.some((x) => x.type === 'reset'), 'reset');
    const reset = c.received.find((x) => x.type === 'reset');
    expect(reset).toMatchObject({
      type: 'reset',
      reset: {
        reason: ResetReason.BeyondRetention,
        snapshot: { orderId: 'o-4', status: Shipped, lastSeq: 8 },
      },
    });
    await app.publish('o-4', Delivered);
    await c.until(ended('o-4'), 'end of o-4');
    expect(timeline(c.received, 'o-4')).toEqual([
      'ack:8',
      'reset:beyond_retention:8',
      '9:delivered',
      'end:completed',
    ]);

    // The oldest retained point is still served as events, without a reset.
    const d = await pool.connect(app.httpUrl);
    await d.subscribe('o-4', 5);
    await d.until(ended('o-4'), 'end of o-4 (second client)');
    expect(timeline(d.received, 'o-4')).toEqual([
      'ack:9',
      '6:tracking',
      '7:tracking',
      '8:tracking',
      '9:delivered',
      'end:completed',
    ]);
  });

  it('a resume point ahead of the last seq gets a reset ahead_of_last_seq', async () => {
    const app = await start();
    await app.createOrder('o-5', Paid);
    const c = await pool.connect(app.httpUrl);

    await c.subscribe('o-5', 99);
    await app.publish('o-5', Packed);
    await c.until(reached('o-5', 3), 'live event after the reset');
    expect(timeline(c.received, 'o-5')).toEqual(['ack:2', 'reset:ahead_of_last_seq:2', '3:packed']);
  });

  it('replay/live race: events published while subscribing arrive once each, no gap', async () => {
    const app = await start();
    const c = await pool.connect(app.httpUrl);
    const ITERATIONS = 40;
    const BURST = 12;
    const expected = new Map<string, number>();
    let raced = 0;

    for (let i = 0; i < ITERATIONS; i++) {
      const orderId = `race-${i}`;
      await app.createOrder(orderId, Paid, Shipped);
      const afterSeq = i % 4; // 0..3: from the start, mid-replay, and at the last seq
      expected.set(orderId, afterSeq);
      // Publishing on every turn of the event loop interleaves with the subscribe
      // travelling through the socket and with bus.open() and the ack on the server.
      const publisher = (async () => {
        for (let k = 0; k < BURST; k++) {
          await app.track(orderId);
          await new Promise((r) => setImmediate(r));
        }
      })();
      const [ack] = await Promise.all([c.subscribe(orderId, afterSeq), publisher]);
      if (!ack.ok) throw new Error(`subscribe ${orderId} failed: ${ack.error.message}`);
      // The subscription started part-way through the burst: the race was really run.
      if (ack.lastSeq > 3 && ack.lastSeq < 3 + BURST) raced++;
      await app.publish(orderId, Delivered);
    }
    for (const orderId of expected.keys()) await c.until(ended(orderId), `end of ${orderId}`);

    expect(raced).toBeGreaterThan(0);
    expect(app.bus.stats.overflows.conflate).toBe(0);
    for (const [orderId, afterSeq] of expected) {
      const seqs = c.events(orderId).map((e) => e.seq);
      const last = 3 + BURST + 1;
      const want = Array.from({ length: last - afterSeq }, (_, k) => afterSeq + 1 + k);
      expect({ orderId, seqs }).toEqual({ orderId, seqs: want });
    }
  });

  it('follows several orders on one socket; unsubscribe stops that order only', async () => {
    const app = await start();
    for (const id of ['a', 'b', 'c']) await app.createOrder(id);
    const cl = await pool.connect(app.httpUrl);
    for (const id of ['a', 'b', 'c']) await cl.subscribe(id);
    expect(app.bus.subscriberCount()).toBe(3);

    for (const id of ['a', 'b', 'c']) await app.publish(id, Paid);
    await cl.until((r) => ['a', 'b', 'c'].every((id) => reached(id, 2)(r)), 'seq 2 of a, b, c');

    expect(await cl.unsubscribe('b')).toEqual({ ok: true, orderId: 'b', released: true });
    expect(app.bus.subscriberCount('b')).toBe(0);
    expect(await cl.unsubscribe('b')).toEqual({ ok: true, orderId: 'b', released: false });

    // b's event is published first: had it been sent, it would arrive before a's and c's.
    for (const id of ['b', 'a', 'c']) await app.publish(id, Packed);
    await cl.until((r) => reached('a', 3)(r) && reached('c', 3)(r), 'seq 3 of a and c');

    expect(cl.statuses('a').map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(cl.statuses('b').map((e) => e.seq)).toEqual([1, 2]);
    expect(cl.statuses('c').map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(cl.statuses('a').map((e) => e.status)).toEqual([Created, Paid, Packed]);
  });

  it('subscribing twice to one order replaces the first subscription', async () => {
    const app = await start();
    await app.createOrder('r-1', Paid);
    const c = await pool.connect(app.httpUrl);

    await c.subscribe('r-1');
    await c.until(reached('r-1', 2), 'replay of r-1');
    await c.subscribe('r-1', 2);
    expect(app.bus.subscriberCount('r-1')).toBe(1);

    await app.publish('r-1', Packed);
    await c.until(reached('r-1', 3), 'live event of r-1');
    expect(timeline(c.received, 'r-1')).toEqual([
      'ack:2',
      '1:created',
      '2:paid',
      'ack:2',
      '3:packed',
    ]);
  });

  it('counts connections and releases every subscription when a client disconnects', async () => {
    const app = await start();
    for (const id of ['d-1', 'd-2', 'd-3']) await app.createOrder(id);
    const c1 = await pool.connect(app.httpUrl);
    const c2 = await pool.connect(app.httpUrl, { transport: 'polling' });
    await waitFor(() => app.bus.stats.connectionsByTransport.get('ws') === 2, 'two ws connections');

    for (const id of ['d-1', 'd-2', 'd-3']) await c1.subscribe(id);
    await c2.subscribe('d-1');
    expect(app.bus.subscriberCount()).toBe(4);
    expect(app.bus.stats.subscriptionsByTransport.get('ws')).toBe(4);

    c1.socket.disconnect();
    await waitFor(() => app.bus.subscriberCount() === 1, 'c1 subscriptions released');
    c2.socket.disconnect();
    await waitFor(() => app.bus.subscriberCount() === 0, 'all subscriptions released');
    await waitFor(() => app.bus.stats.connectionsByTransport.get('ws') === 0, 'no ws connection');
  });
});
