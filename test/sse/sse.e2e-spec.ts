import { connect as netConnect, type Socket } from 'node:net';
import type { ClientHttp2Session } from 'node:http2';
import { EventSource } from 'eventsource';
import { OrderStatus } from '@app/order-domain';
import { PAYLOAD_DOMAIN, publishPayload } from '@app/payload-domain';
import { authorizedEventSource } from '../support/event-source';
import { h2Connect } from '../support/h2-client';
import { openSseH1, openSseH2, type SseStream } from '../support/sse-stream';
import { startTestApp, type TestApp } from '../support/test-app';
import { once, waitFor } from '../support/wait-for';

/** A payload event's SSE `event:` name. */
const PAYLOAD_EVENT = PAYLOAD_DOMAIN.kinds[0].wireName;

const LIFECYCLE = [
  OrderStatus.Paid,
  OrderStatus.Packed,
  OrderStatus.Shipped,
  OrderStatus.OutForDelivery,
  OrderStatus.Delivered,
];

describe('SSE transport', () => {
  let app: TestApp;
  let h2: ClientHttp2Session;
  const streams: SseStream[] = [];

  beforeEach(async () => {
    app = await startTestApp({ SSE_HEARTBEAT_MS: '1000' });
    h2 = await h2Connect(app.httpsUrl, app.tlsCert);
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    h2.close();
    await app.close();
  });

  const open = {
    h1: async (path: string, headers?: Record<string, string>) => {
      const s = await openSseH1(`${app.httpUrl}${path}`, headers);
      streams.push(s);
      return s;
    },
    h2: async (path: string, headers?: Record<string, string>) => {
      const s = await openSseH2(h2, path, headers);
      streams.push(s);
      return s;
    },
  };

  describe.each(['h1', 'h2'] as const)('over %s', (proto) => {
    it('delivers a scripted sequence in order and ends on the terminal status', async () => {
      await app.createOrder('sse-a');
      const s = await open[proto]('/v1/orders/sse-a/stream');
      expect(s.status).toBe(200);
      expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(s.headers['cache-control']).toBe('no-store');
      expect(s.headers['x-accel-buffering']).toBe('no');
      expect(
        s.messages[0]?.retry ??
          (await s.waitFor((m) => m.length > 0, 'retry'), s.messages[0].retry),
      ).toBe(2000);
      for (const status of LIFECYCLE) await app.publish('sse-a', status);
      await s.ended;
      const events = s.events();
      expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(events.map((e) => e.status)).toEqual([OrderStatus.Created, ...LIFECYCLE]);
      // Every event's id is its seq, which is what makes Last-Event-ID resume exact.
      expect(s.messages.filter((m) => m.event === 'status').map((m) => m.id)).toEqual([
        '1',
        '2',
        '3',
        '4',
        '5',
        '6',
      ]);
      expect(s.messages.at(-1)).toMatchObject({ event: 'end', data: '{"reason":"completed"}' });
      await waitFor(() => app.bus.subscriberCount() === 0, 'subscription released');
    });

    it('resumes from ?after= and from Last-Event-ID (which wins) with nothing twice', async () => {
      await app.createOrder('sse-r', OrderStatus.Paid, OrderStatus.Packed, OrderStatus.Shipped);
      const byQuery = await open[proto]('/v1/orders/sse-r/stream?after=2');
      const byHeader = await open[proto]('/v1/orders/sse-r/stream?after=0', {
        'last-event-id': '3',
      });
      await app.publish('sse-r', OrderStatus.OutForDelivery);
      await byQuery.waitFor(() => byQuery.events().length === 3, 'query resume');
      await byHeader.waitFor(() => byHeader.events().length === 2, 'header resume');
      expect(byQuery.events().map((e) => e.seq)).toEqual([3, 4, 5]);
      expect(byHeader.events().map((e) => e.seq)).toEqual([4, 5]);
    });

    it('sends a heartbeat comment', async () => {
      await app.createOrder('sse-hb');
      const s = await open[proto]('/v1/orders/sse-hb/stream?after=1');
      await s.waitFor((m) => m.some((x) => x.comment === 'ping'), 'heartbeat', 3_000);
    });

    it('releases the bus subscription when the client goes away', async () => {
      await app.createOrder('sse-d');
      const s = await open[proto]('/v1/orders/sse-d/stream');
      await waitFor(() => app.bus.subscriberCount('sse-d') === 1, 'subscribed');
      s.close();
      await waitFor(() => app.bus.subscriberCount() === 0, 'subscriber count back to zero');
    });
  });

  it('sends a reset with the snapshot when the resume point is older than retention', async () => {
    await app.close();
    app = await startTestApp({ BUS_RING_SIZE: '4' });
    h2.close();
    h2 = await h2Connect(app.httpsUrl, app.tlsCert);
    await app.createOrder(
      'sse-old',
      OrderStatus.Paid,
      OrderStatus.Packed,
      OrderStatus.Shipped,
      'tracking',
      OrderStatus.OutForDelivery,
    );
    for (const proto of ['h1', 'h2'] as const) {
      const s = await open[proto]('/v1/orders/sse-old/stream?after=1');
      await s.waitFor((m) => m.some((x) => x.event === 'reset'), 'reset');
      const reset = s.messages.find((m) => m.event === 'reset');
      expect(reset?.id).toBe('6');
      expect(JSON.parse(reset?.data ?? '')).toEqual({
        reason: 'beyond_retention',
        snapshot: expect.objectContaining({
          orderId: 'sse-old',
          status: 'out_for_delivery',
          lastSeq: 6,
        }),
      });
      expect(s.events()).toEqual([]);
    }
    const ahead = await open.h1('/v1/orders/sse-old/stream?after=99');
    await ahead.waitFor((m) => m.some((x) => x.event === 'reset'), 'ahead reset');
    expect(JSON.parse(ahead.messages.find((m) => m.event === 'reset')?.data ?? '')).toMatchObject({
      reason: 'ahead_of_last_seq',
    });
  });

  it('answers bad input with typed errors while other streams keep flowing', async () => {
    await app.createOrder('sse-ok');
    const healthy = await open.h1('/v1/orders/sse-ok/stream?after=1');
    const cases: [string, Record<string, string>, number, string][] = [
      ['/v1/orders/nope/stream', {}, 404, 'not_found'],
      ['/v1/orders/bad!id/stream', {}, 400, 'invalid_argument'],
      [`/v1/orders/${'x'.repeat(65)}/stream`, {}, 400, 'invalid_argument'],
      ['/v1/orders/sse-ok/stream?after=-1', {}, 400, 'invalid_argument'],
      ['/v1/orders/sse-ok/stream?after=abc', {}, 400, 'invalid_argument'],
      ['/v1/orders/sse-ok/stream', { 'last-event-id': 'x1' }, 400, 'invalid_argument'],
    ];
    for (const [path, headers, status, code] of cases) {
      for (const proto of ['h1', 'h2'] as const) {
        const s = await open[proto](path, headers);
        await s.ended;
        expect([path, proto, s.status]).toEqual([path, proto, status]);
        expect(JSON.parse(s.body())).toEqual({ error: { code, message: expect.any(String) } });
      }
    }
    await app.publish('sse-ok', OrderStatus.Paid);
    await healthy.waitFor(() => healthy.events().length === 1, 'healthy stream still served');
    await waitFor(() => app.bus.subscriberCount() === 1, 'only the healthy stream subscribed');
  });

  it('answers 204 when resuming a finished order, so EventSource stops reconnecting', async () => {
    await app.createOrder('sse-done', OrderStatus.Cancelled);
    const es = authorizedEventSource(`${app.httpUrl}/v1/orders/sse-done/stream`);
    const seen: number[] = [];
    es.addEventListener('status', (e) => seen.push((JSON.parse(e.data) as { seq: number }).seq));
    // EventSource reconnects after the stream ends, with Last-Event-ID: 2; the 204 ends it.
    await waitFor(() => es.readyState === EventSource.CLOSED, 'EventSource closed', 10_000);
    expect(seen).toEqual([1, 2]);
    es.close();
  });

  it('ends streams at their maximum age; EventSource resumes with Last-Event-ID and loses nothing', async () => {
    h2.close();
    await app.close();
    app = await startTestApp({
      STREAM_MAX_AGE_MS: '300',
      STREAM_MAX_AGE_JITTER_MS: '0',
      SSE_RETRY_MS: '100',
    });
    h2 = await h2Connect(app.httpsUrl, app.tlsCert);
    await app.createOrder('sse-age');
    const es = authorizedEventSource(`${app.httpUrl}/v1/orders/sse-age/stream`);
    const seen: number[] = [];
    const ends: string[] = [];
    // Status changes and tracking updates share the seqs: a client listens to both.
    for (const name of ['status', 'tracking']) {
      es.addEventListener(name, (e) => seen.push((JSON.parse(e.data) as { seq: number }).seq));
    }
    es.addEventListener('end', (e) => ends.push((JSON.parse(e.data) as { reason: string }).reason));
    for (let i = 0; i < 30; i++) {
      await app.progress('sse-age');
      await new Promise((r) => setTimeout(r, 40));
    }
    await app.publish('sse-age', OrderStatus.Delivered);
    await waitFor(() => seen.length === 32, 'every event across reconnects', 10_000);
    es.close();
    expect(seen).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
    expect(ends.filter((r) => r === 'max_age').length).toBeGreaterThanOrEqual(2);
  });

  it('a consumer that stops reading does not delay a fast one, and its queue stays bounded', async () => {
    await app.close();
    // Events of a chosen size are the load test's own domain's, not the order's.
    app = await startTestApp({ BUS_QUEUE_CAPACITY: '8', STREAM_DOMAIN: 'payload' });
    h2.close();
    h2 = await h2Connect(app.httpsUrl, app.tlsCert);
    await publishPayload(app.store, { orderId: 'sse-slow', bytes: 0 });
    // A raw TCP client that sends the request and then never reads: the kernel buffers
    // fill, res.write() returns false, and the bus stops writing to it.
    const slow: Socket = netConnect(app.ports.http, '127.0.0.1');
    await once(slow, 'connect');
    slow.write(
      `GET /v1/orders/sse-slow/stream?after=1 HTTP/1.1\r\nHost: x\r\nAuthorization: ${app.authHeaders.authorization}\r\n\r\n`,
    );
    slow.pause();
    const fast = await open.h1('/v1/orders/sse-slow/stream?after=1');
    await waitFor(() => app.bus.subscriberCount('sse-slow') === 2, 'both subscribed');
    // ~18 MB in all: more than the loopback socket buffers can absorb for the slow one.
    const total = 300;
    // Paced, as a real source is: a burst in one tick would overflow any consumer.
    for (let i = 0; i < total; i++) {
      await publishPayload(app.store, { orderId: 'sse-slow', bytes: 60 * 1024 });
      await new Promise((r) => setTimeout(r, 1));
    }
    const payloads = () => fast.messages.filter((m) => m.event === PAYLOAD_EVENT);
    await fast.waitFor(() => payloads().length === total, 'fast consumer got everything', 10_000);
    expect(payloads().map((m) => Number(m.id))).toEqual(
      Array.from({ length: total }, (_, i) => i + 2),
    );
    expect(app.bus.stats.overflows.conflate).toBeGreaterThan(0);
    expect(app.bus.stats.overflowDropped.conflate).toBeGreaterThan(0);
    slow.destroy();
    await waitFor(() => app.bus.subscriberCount('sse-slow') === 1, 'slow one released');
  });

  it('handles the replay/live race: events published while clients connect arrive once, in order', async () => {
    await app.createOrder('sse-race');
    const clients: SseStream[] = [];
    const publishing = (async () => {
      for (let i = 0; i < 60; i++) await app.progress('sse-race');
    })();
    for (let i = 0; i < 10; i++)
      clients.push(await open[i % 2 ? 'h2' : 'h1'](`/v1/orders/sse-race/stream?after=${i}`));
    await publishing;
    await app.publish('sse-race', OrderStatus.Cancelled);
    for (const [i, c] of clients.entries()) {
      await c.ended;
      const seqs = c.events().map((e) => e.seq);
      expect(seqs).toEqual(Array.from({ length: 62 - i }, (_, k) => k + i + 1));
    }
  });
});
