import { OrderStatus } from '@app/order-domain/order-status';
import { watchOrder, type TransportName, type WatchItem } from '@app/client/node';
import { startTestApp, type TestApp } from '../support/test-app';
import {
  ALL_TRANSPORTS,
  baseUrlFor,
  connectionLog,
  range,
  shippedOrder,
  track,
} from './client-harness';
import type { Recorded } from './client-harness';

const EVENTS = 300;
const MAX_BUFFERED = 25;
/** The consumer's work per item: well below the publisher's pace. */
const WORK_MS = 5;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A consumer slower than the stream, against the real service: the client library
 * buffers at most `maxBufferedItems` for it, lets the connection go when the buffer is
 * full and resumes after the last item it buffered once the consumer caught up, so every
 * seq arrives exactly once and the service never has to drop anything for it.
 */
describe.each(ALL_TRANSPORTS)('client backpressure over %s (Node)', (transport: TransportName) => {
  let app: TestApp;

  beforeAll(async () => {
    // Retention for the whole test, so a paused client's resume point is always served
    // (what a pause may cost is then visible as a reset, which the test forbids).
    app = await startTestApp({ BUS_RING_SIZE: String(EVENTS * 2) });
  });
  afterAll(async () => {
    await app.close();
  });

  it(`keeps ${EVENTS} events to a slow consumer exactly once, its buffer bounded`, async () => {
    const orderId = `bp-${transport}`;
    await shippedOrder(app, orderId);
    const log: Recorded['connection'] = [];
    const watch = watchOrder(orderId, {
      transport,
      baseUrl: baseUrlFor(app, transport),
      token: app.defaultToken,
      longPollWaitS: 5,
      maxBufferedItems: MAX_BUFFERED,
      onConnection: connectionLog(log),
    });
    const items: WatchItem[] = [];
    let maxBuffered = 0;
    const consumed = (async () => {
      for await (const item of watch) {
        items.push(item);
        await pause(WORK_MS);
        // Queued (stats count at queueing) minus taken; largest just before the next pull.
        const queued = Object.values(watch.stats.items).reduce((a, b) => a + b, 0);
        maxBuffered = Math.max(maxBuffered, queued - items.length);
      }
    })();
    // Bursts of ten every 20 ms: about 500 events/s, two to three times the consumer's
    // pace. (Much faster bursts overflow the service's queue for a gRPC subscriber even
    // with a fast consumer, which is not what this test is about.)
    let last = 4;
    while (last < 4 + EVENTS) {
      for (let i = 0; i < 10; i++) last = await track(app, orderId);
      await pause(20);
    }
    await app.publish(orderId, OrderStatus.Delivered);
    const end = await watch.done;
    await consumed;

    const seqs = items.flatMap((i) =>
      i.kind === 'event' ? [i.event.seq] : i.kind === 'tracking' ? [i.tracking.seq] : [],
    );
    expect(end).toMatchObject({ kind: 'end', reason: 'completed', lastSeq: last + 1 });
    expect(seqs).toEqual(range(1, last + 1));
    expect(items.filter((i) => ['gap', 'skipped', 'reset'].includes(i.kind))).toEqual([]);
    expect(watch.stats).toMatchObject({ lost: 0, duplicates: 0 });
    expect(maxBuffered).toBeLessThanOrEqual(MAX_BUFFERED);
    const paused = log.filter((c) => c.e.type === 'paused').map((c) => c.e);
    expect(paused.length).toBeGreaterThanOrEqual(2);
    expect(paused).toEqual(paused.map(() => ({ type: 'paused', reason: 'backpressure' })));
    expect(watch.stats.backpressurePauses).toBe(paused.length);
    // Planned pauses, not failures: no retry delay was ever scheduled.
    expect(log.filter((c) => c.e.type === 'retrying')).toEqual([]);
  });
});
