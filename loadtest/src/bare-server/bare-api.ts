import { constants as perfConstants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { GC_DURATION_METRIC } from '../sampling/gc-window';
import { isPayload, isTracking, statusOf, type BareEvent, type OrderLog } from './order-log';

/**
 * What the bare server and the framework floor answer alike: the long-poll body and its
 * wait, an order's state, the admin API the load test drives and the /metrics lines it
 * reads. Plain functions over an OrderLog, so the two servers differ only in what serves
 * the HTTP requests (node:http directly, or NestJS on Fastify).
 */

/** The longest hold either server grants (the service caps its own by configuration). */
export const MAX_WAIT_S = 30;

/** The event's name on the JSON transports, as the service names it. */
export const nameOf = (e: BareEvent): 'status' | 'tracking' | 'payload' =>
  isPayload(e) ? 'payload' : isTracking(e) ? 'tracking' : 'status';

/** A long-poll answer with `events`, the service's body shape. */
export function pollBody(orderId: string, after: number, events: readonly BareEvent[]): object {
  return {
    orderId,
    events: events.map((e) => ({ type: nameOf(e), ...e })),
    next: events.length ? events[events.length - 1].seq : after,
    completed: false,
  };
}

/**
 * Holds a long-poll: `answer(events)` with what follows `after` as soon as there is
 * any (on the next turn, so events published in the same tick share one answer), or
 * `answer(undefined)` when `waitS` passes with nothing. Answers at once when something
 * is already there or `waitS` is 0. Returns the cancel for a client that left.
 */
export function holdPoll(
  log: OrderLog,
  orderId: string,
  after: number,
  waitS: number,
  answer: (events: BareEvent[] | undefined) => void,
): () => void {
  const ready = log.after(orderId, after);
  if (ready.length > 0 || waitS <= 0) {
    answer(ready);
    return () => undefined;
  }
  const timer = setTimeout(
    () => {
      off();
      answer(undefined);
    },
    Math.min(waitS, MAX_WAIT_S) * 1000,
  );
  const off = log.listen(orderId, () => {
    clearTimeout(timer);
    off();
    setImmediate(() => answer(log.after(orderId, after)));
  });
  return () => {
    clearTimeout(timer);
    off();
  };
}

/**
 * `GET /v1/orders/:orderId` (`/v1/streams/:orderId` in the payload domain): the stream's
 * state, or undefined for an unknown one.
 */
export function orderBody(log: OrderLog, orderId: string): object | undefined {
  const order = log.get(orderId);
  if (!order) return undefined;
  const last = order.events[order.events.length - 1];
  const status = statusOf(last);
  return {
    orderId,
    ...(status !== undefined ? { status } : {}),
    lastSeq: order.lastSeq,
    updatedAtUs: last.publishedAtUs,
  };
}

/** The stream's state routes of both domains; the match's group 1 is the stream's id. */
export const SNAPSHOT_ROUTE = /^\/v1\/(?:orders|streams)\/([^/]+)$/;

/** The simulator's state as the admin API reports it. */
export const simulatorStatus = (log: OrderLog): object => ({
  state: log.state,
  published: log.published,
  failed: 0,
});

/**
 * The admin API (`/v1/admin/simulator`, `.../start`, `.../stop`): the simulator's status
 * after the call, or undefined for a path that is not part of it.
 */
export function adminAnswer(
  log: OrderLog,
  method: string,
  path: string,
  body: Record<string, unknown>,
): object | undefined {
  if (path === '/v1/admin/simulator' && method === 'PUT') {
    // The service's two schedules: the payload domain's sets `payloadBytes`.
    const events =
      body.payloadBytes !== undefined
        ? { domain: 'payload' as const, bytes: Number(body.payloadBytes) }
        : { domain: 'order' as const };
    log.prepare(
      Number(body.orders),
      Number(body.ratePerOrder),
      events,
      typeof body.prefix === 'string' ? body.prefix : 'sim',
    );
    if (body.autoStart !== false) log.start();
  } else if (path === '/v1/admin/simulator/start') log.start();
  else if (path === '/v1/admin/simulator/stop') log.stop();
  else if (path !== '/v1/admin/simulator') return undefined;
  return simulatorStatus(log);
}

/**
 * The /metrics lines the load test reads: RSS, V8's allocation total as the service
 * reports it (Node 26+), for heap bytes per delivery, and the GC histogram's sums and
 * counts by kind (every collection, as the service counts them); written without the
 * service's code.
 */
export function metricsText(): string {
  const allocated = (getHeapStatistics() as { total_allocated_bytes?: unknown })
    .total_allocated_bytes;
  return (
    `process_resident_memory_bytes ${process.memoryUsage.rss()}\n` +
    (typeof allocated === 'number' ? `nodejs_heap_allocated_bytes_total ${allocated}\n` : '') +
    gcLines()
  );
}

const GC_KINDS: Readonly<Record<number, string>> = {
  [perfConstants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
const gcByKind = new Map<string, { count: number; seconds: number }>();
let gcObserver: PerformanceObserver | undefined;

/** Starts counting at the first scrape (the load test scrapes before its window). */
function gcLines(): string {
  if (gcObserver === undefined) {
    gcObserver = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const kind =
          GC_KINDS[(e as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'unknown';
        const t = gcByKind.get(kind) ?? { count: 0, seconds: 0 };
        t.count++;
        t.seconds += e.duration / 1000;
        gcByKind.set(kind, t);
      }
    });
    gcObserver.observe({ entryTypes: ['gc'] });
  }
  let text = '';
  for (const [kind, t] of gcByKind) {
    text +=
      `${GC_DURATION_METRIC}_sum{kind="${kind}"} ${t.seconds}\n` +
      `${GC_DURATION_METRIC}_count{kind="${kind}"} ${t.count}\n`;
  }
  // Present (zero) before the first collection, so the load test knows it is counted.
  return (
    text ||
    `${GC_DURATION_METRIC}_sum{kind="minor"} 0\n${GC_DURATION_METRIC}_count{kind="minor"} 0\n`
  );
}
