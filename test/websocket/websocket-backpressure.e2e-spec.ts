import { performance } from 'node:perf_hooks';
import { OrderStatus } from '@app/order-domain';
import { OverflowPolicy } from '@app/event-bus';
import { PAYLOAD_DOMAIN, publishPayload } from '@app/payload-domain';
import { Readiness } from '../../apps/order-status/src/ops/readiness.service';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WsStream } from '../support/websocket-stream';

const QUEUE_CAPACITY = 4;
/** Large events fill the kernel's socket buffers (a few MB on loopback) quickly. */
const PAYLOAD_BYTES = 60_000;
/** Upper bound on events published; the loop stops earlier once overflow is proven. */
const MAX_EVENTS = 500;
/** Events published after the first overflow, while the slow reader is stuck. */
const EVENTS_AFTER_OVERFLOW = 20;
/** Generous per-event bound for the fast client: far below "waits for the slow one". */
const FAST_DEADLINE_MS = 2_000;

describe('raw WebSocket: back-pressure and shutdown', () => {
  let app: TestApp;
  const streams: WsStream[] = [];

  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await app.close();
  });

  const open = async (path: string): Promise<WsStream> => {
    const s = await WsStream.open(`${app.httpUrl.replace(/^http/, 'ws')}${path}`, {
      headers: app.authHeaders,
    });
    streams.push(s);
    return s;
  };

  it('a reader that stops reading gets `skipped`, never delays a fast one, and its queue stays bounded', async () => {
    app = await startTestApp({
      BUS_QUEUE_CAPACITY: String(QUEUE_CAPACITY),
      BUS_OVERFLOW_POLICY: OverflowPolicy.Conflate,
      // No ping may cut the stuck socket during the test.
      WEBSOCKET_PING_INTERVAL_MS: '120000',
      // Events of a chosen size are the load test's own domain's, not the order's.
      STREAM_DOMAIN: 'payload',
    });
    await publishPayload(app.store, { orderId: 'wbp', bytes: 0 });
    const slow = await open('/v1/orders/wbp/ws?after=1');
    const fast = await open('/v1/orders/wbp/ws?after=1');
    // The client stops reading its TCP socket: the server's send buffer and then the
    // kernel's fill, and bufferedAmount passes the high-water mark.
    slow.ws.pause();
    const stats = app.bus.stats;
    let lastSeq = 1;
    let overflowAt: number | undefined;
    let maxLatencyMs = 0;
    let maxPending = 0;
    for (let i = 0; i < MAX_EVENTS; i++) {
      const t0 = performance.now();
      lastSeq = (await publishPayload(app.store, { orderId: 'wbp', bytes: PAYLOAD_BYTES })).seq;
      const seq = lastSeq;
      await fast.until((f) => f.at(-1)?.data.seq === seq, `fast got ${seq}`, FAST_DEADLINE_MS);
      maxLatencyMs = Math.max(maxLatencyMs, performance.now() - t0);
      maxPending = Math.max(maxPending, app.bus.pendingByTransport().get('websocket') ?? 0);
      if (overflowAt === undefined && stats.overflows.conflate > 0) overflowAt = i;
      if (overflowAt !== undefined && i >= overflowAt + EVENTS_AFTER_OVERFLOW) break;
    }
    expect(overflowAt).toBeDefined();
    expect(fast.seqs([PAYLOAD_DOMAIN.kinds[0].wireName])).toEqual(
      Array.from({ length: lastSeq - 1 }, (_, k) => k + 2),
    );
    expect(maxLatencyMs).toBeLessThan(FAST_DEADLINE_MS);
    // The stuck subscriber's backlog in the bus never passed its bounded queue.
    expect(maxPending).toBeLessThanOrEqual(QUEUE_CAPACITY);

    // Reading again, it gets the newest event, with the dropped ones named by `skipped`.
    slow.ws.resume();
    await slow.until((f) => f.at(-1)?.data.seq === lastSeq, 'slow reader reaches the newest seq');
    let cursor = 1;
    for (const { type, data } of slow.frames) {
      const next = type === 'skipped' ? (data.toSeq as number) : (data.seq as number);
      // Every frame continues exactly where the previous one left the cursor.
      expect(type === 'skipped' ? data.fromSeq : next).toBe(cursor + 1);
      cursor = next;
    }
    expect(slow.of('skipped').length).toBeGreaterThan(0);
    expect(stats.skippedByTransport.get('websocket')?.conflate).toBeGreaterThan(0);
  });

  it('drains on shutdown: `end {shutdown, retryAfterMs}` and 1012', async () => {
    app = await startTestApp({ SHUTDOWN_DRAIN_MS: '2000' });
    await app.createOrder('wsd', OrderStatus.Paid);
    const s = await open('/v1/orders/wsd/ws');
    await s.until((f) => f.length === 2, 'replay');
    const closing = app.close();
    expect(await s.closed).toEqual({ code: 1012, reason: 'shutdown' });
    expect(s.frames.at(-1)).toEqual({
      type: 'end',
      data: { reason: 'shutdown', retryAfterMs: expect.any(Number) },
    });
    await closing;
  });

  it('refuses a stream opened while the service drains with the same advice', async () => {
    app = await startTestApp();
    await app.createOrder('wsd2');
    app.app.get(Readiness).beginDrain();
    const late = await open('/v1/orders/wsd2/ws');
    expect(await late.closed).toEqual({ code: 1012, reason: 'shutdown' });
    expect(late.frames).toEqual([
      { type: 'end', data: { reason: 'shutdown', retryAfterMs: expect.any(Number) } },
    ]);
    await waitFor(() => app.bus.subscriberCount() === 0, 'nothing subscribed');
  });
});
