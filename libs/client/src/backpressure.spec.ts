import { OrderStatus } from '@app/order-domain/order-status';
import type { StreamItem } from '@app/order-domain/order-events';
import type { ConnectionEnd, ConnectRequest, ConnectorFactory } from './transports/connector';
import type { ConnectionEvent, OrderWatch, WatchItem, WatchOptions } from './types';
import { createWatch } from './watch-order';

const ev = (seq: number): StreamItem => ({
  kind: 'event',
  event: { orderId: 'o', seq, status: OrderStatus.Paid, publishedAtUs: 0 },
});

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

type Transport = (req: ConnectRequest) => Promise<ConnectionEnd>;

/**
 * A service holding seqs 1..`total`: each connection replays what follows its resume
 * point, `batch` items per macrotask (a burst, as one socket read or one long-poll
 * answer delivers them), then ends with `completed`. Aborting the connection rejects it
 * at once, as the real transports do.
 */
function service(total: number, batch: number): Transport {
  return async (req) => {
    req.opened();
    let seq = req.afterSeq;
    while (seq < total) {
      await macrotask();
      if (req.signal.aborted) throw new Error('aborted');
      for (let i = 0; i < batch && seq < total; i++) req.item(ev(++seq));
    }
    return { reason: 'completed' };
  };
}

function watchOver(transport: Transport, options: Partial<WatchOptions> = {}) {
  const afters: number[] = [];
  const factory: ConnectorFactory = () => ({
    connect: (req) => {
      afters.push(req.afterSeq);
      return transport(req);
    },
    close: () => undefined,
  });
  const events: ConnectionEvent[] = [];
  const watch = createWatch(
    'o',
    {
      transport: 'sse',
      baseUrl: 'http://x',
      // Long enough that a pause mistaken for a failure would show in the run time.
      backoff: { baseMs: 2_000, maxMs: 2_000 },
      onConnection: (e) => events.push(e),
      ...options,
    },
    { sse: factory },
  );
  return { watch, afters, events };
}

/** Iterates slowly (`work` per item); the seqs seen and the largest buffer observed. */
async function consume(watch: OrderWatch, work: () => Promise<void>) {
  const items: WatchItem[] = [];
  let maxBuffered = 0;
  for await (const item of watch) {
    items.push(item);
    await work();
    // The buffer is largest just before the next pull: it only grows between pulls.
    maxBuffered = Math.max(maxBuffered, watch.buffered);
  }
  const seqs = items.flatMap((i) => (i.kind === 'event' ? [i.event.seq] : []));
  return { items, seqs, maxBuffered };
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('bounded buffering (maxBufferedItems)', () => {
  it('keeps a slow consumer within the bound across many pauses, losing and repeating nothing', async () => {
    const total = 3_000;
    const max = 20;
    const { watch, events } = watchOver(service(total, 7), { maxBufferedItems: max });
    const started = performance.now();
    // Three macrotasks per item: slower than a service that sends 7 items per macrotask.
    const r = await consume(watch, async () => {
      await macrotask();
      await macrotask();
      await macrotask();
    });
    expect(r.seqs).toEqual(range(1, total));
    expect(r.items.at(-1)).toMatchObject({ kind: 'end', reason: 'completed', lastSeq: total });
    expect(r.maxBuffered).toBeLessThanOrEqual(max);
    expect(watch.stats).toMatchObject({ duplicates: 0, lost: 0 });
    const paused = events.filter((e) => e.type === 'paused');
    expect(paused.length).toBeGreaterThanOrEqual(50);
    expect(paused.every((e) => e.type === 'paused' && e.reason === 'backpressure')).toBe(true);
    expect(watch.stats.backpressurePauses).toBe(paused.length);
    expect(watch.stats.resumes).toBe(paused.length);
    // A planned pause is neither a failure nor a retry: no backoff, no retry delay.
    expect(events.filter((e) => e.type === 'retrying')).toEqual([]);
    expect(events.filter((e) => e.type === 'connecting' && e.attempt > 0)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(2_000 * 3);
  });

  it('discards what arrives after the decision and resumes right after the last queued item', async () => {
    // Everything in one synchronous burst, then `completed`, as one long-poll answer.
    const burst: Transport = async (req) => {
      req.opened();
      for (let seq = req.afterSeq + 1; seq <= 50; seq++) req.item(ev(seq));
      return { reason: 'completed' };
    };
    const { watch, afters } = watchOver(burst, { maxBufferedItems: 10 });
    const r = await consume(watch, macrotask);
    expect(r.seqs).toEqual(range(1, 50));
    expect(r.maxBuffered).toBeLessThanOrEqual(10);
    // Seq 1 goes straight to the waiting consumer, 2..11 fill the buffer; after that
    // each resume waits for the low-water mark (5), so each burst queues 5 more.
    expect(afters).toEqual([0, 11, 16, 21, 26, 31, 36, 41, 46]);
    expect(watch.stats.duplicates).toBe(0);
  });

  it('waits for the consumer while paused; close() discards the rest and ends at what it took', async () => {
    const { watch, afters, events } = watchOver(service(100, 5), { maxBufferedItems: 8 });
    const it = watch[Symbol.asyncIterator]();
    await it.next();
    // The consumer stops pulling: the watch fills up, lets go, and waits.
    for (let i = 0; i < 20; i++) await macrotask();
    expect(events.filter((e) => e.type === 'paused')).toEqual([
      { type: 'paused', reason: 'backpressure' },
    ]);
    expect(afters).toEqual([0]);
    expect(watch.buffered).toBe(8);
    const timers = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    watch.close();
    const end = await watch.done;
    // The consumer took seq 1; the 8 it never took are not part of its position.
    expect(end).toEqual({ kind: 'end', reason: 'aborted', lastSeq: 1 });
    expect(watch.cursor).toBe(1);
    expect(afters).toEqual([0]);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(timers);
    // What was queued is discarded: the end comes next, then nothing.
    const rest: WatchItem[] = [];
    for (let n = await it.next(); !n.done; n = await it.next()) rest.push(n.value);
    expect(rest).toEqual([end]);
  });

  it('resumes once the consumer drains to half the bound', async () => {
    const { watch, afters } = watchOver(service(30, 30), { maxBufferedItems: 10 });
    const it = watch[Symbol.asyncIterator]();
    for (let i = 0; i < 5; i++) await macrotask();
    expect(afters).toEqual([0]);
    // 10 queued; 4 taken leaves 6, above the low-water mark of 5: still paused.
    for (let i = 0; i < 4; i++) await it.next();
    for (let i = 0; i < 5; i++) await macrotask();
    expect(afters).toEqual([0]);
    await it.next();
    for (let i = 0; i < 5; i++) await macrotask();
    expect(afters).toEqual([0, 10]);
    watch.close();
    await watch.done;
  });

  it('refuses a bound that is not a positive integer', () => {
    const never: ConnectorFactory = () => ({
      connect: () => new Promise(() => undefined),
      close: () => undefined,
    });
    for (const maxBufferedItems of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() =>
        createWatch('o', { transport: 'sse', baseUrl: 'x', maxBufferedItems }, { sse: never }),
      ).toThrow(/maxBufferedItems/);
    }
  });
});
