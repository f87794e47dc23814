import { heapUsedAfterGc } from '../service/inspector-gc';
import { median as medianOf } from '../report/targets';
import { readProcStat } from '../sampling/proc-stat';
import { runTransport, type LiveRun } from './run-transport';
import { anyTransport, perTransport, type Scenario } from './scenario';

/** Memory of the service after forced GCs, with the subscribers connected at the time. */
export interface Plateau {
  readonly rssBytes: number;
  readonly heapBytes: number | undefined;
  readonly connected: number;
}

async function plateau(live: LiveRun): Promise<Plateau> {
  const heapBytes = await heapUsedAfterGc(live.service.inspectorUrl);
  const { pid } = live.service;
  return {
    heapBytes,
    rssBytes: pid === undefined ? 0 : (readProcStat(pid)?.rssBytes ?? 0),
    connected: live.subscribers.filter((s) => s.connected).length,
  };
}

/**
 * KB per connection between two plateaus (one decimal); undefined without the figure or
 * without a connection between them.
 */
function perConnectionKB(
  from: Plateau,
  to: Plateau,
  field: 'rssBytes' | 'heapBytes',
): number | undefined {
  const a = from[field];
  const b = to[field];
  const n = to.connected - from.connected;
  if (a === undefined || b === undefined || n <= 0) return undefined;
  return Math.round(((b - a) / n / 1024) * 10) / 10;
}

/** Plateaus of the marginal figure: one eighth of the subscribers apart. */
export const PLATEAU_PARTS = 8;

/** Where the connect loop pauses to measure: at each eighth of the subscribers but the last. */
export function plateauPauses(subscribers: number, parts = PLATEAU_PARTS): number[] {
  const at = Array.from({ length: parts - 1 }, (_, k) =>
    Math.floor((subscribers * (k + 1)) / parts),
  );
  return [...new Set(at)].filter((n) => n > 0 && n < subscribers);
}

/**
 * The per-connection cost of a warm service: KB per connection over each stretch between
 * plateaus after the first, and their median, which a one-off step inside one stretch
 * does not move. Undefined without such a stretch or without the figure.
 */
export function marginalKB(
  plateaus: readonly Plateau[],
  field: 'rssBytes' | 'heapBytes',
): { median: number; stretches: number[] } | undefined {
  const stretches: number[] = [];
  for (let i = 2; i < plateaus.length; i += 1) {
    const v = perConnectionKB(plateaus[i - 1], plateaus[i], field);
    if (v !== undefined) stretches.push(v);
  }
  if (stretches.length === 0) return undefined;
  const median = Math.round(medianOf(stretches) * 10) / 10;
  return { median, stretches };
}

/**
 * N subscribers, no events: service CPU, requests/s (long-poll hold timeouts cycling,
 * short-poll churn) and RSS per connection, measured after forced GCs before and after
 * the subscribers connect (seed 001's method; seed 000's idle table). The JS heap in use
 * after the same GCs is kept beside it: RSS also counts pages the allocator and V8 keep
 * mapped after the connection burst, which differs between Node versions, and only the
 * heap says what the service still holds.
 *
 * The same figures are also read at plateaus an eighth of the subscribers apart, the
 * last with all connected and settled before the (idle) window, and reported as the
 * "marginal" cost: the median of KB per connection over the stretches after the first
 * eighth, what one more connection costs a warm service. The whole figure, from an
 * empty service, also carries one-off costs (on Node 26 the malloc arenas of the JIT's
 * background compilation grow once when the connection path gets hot, docs/runtime.md);
 * the median of seven stretches passes over such a step; the last plateau is read before the
 * window, as the window's own traffic (the admin API's scrapes, the inspector) leaves
 * a few hundred KB behind that the whole figure also counts.
 */
export const idle: Scenario = {
  name: 'idle',
  description: 'N subscribers, no events: CPU, RSS per connection after GC, requests/s',
  supports: anyTransport,
  run: (ctx, o) =>
    perTransport(ctx, o.transports, async (transport) => {
      const subscribers = o.subscribers ?? (o.tiny ? 5 : 1000);
      const plateaus: Plateau[] = [];
      return runTransport(
        ctx,
        {
          scenario: 'idle',
          variant: '',
          transport,
          subscribers,
          ratePerOrder: 1,
          durationS: o.durationS ?? (o.tiny ? 2 : 8),
          payloadBytes: 0,
          publish: false,
          inspect: true,
        },
        {
          beforeConnect: async (live) => {
            plateaus.push(await plateau(live));
          },
          connectPauses: {
            at: plateauPauses(subscribers),
            run: async (live) => {
              plateaus.push(await plateau(live));
            },
          },
          beforeStart: async (live) => {
            plateaus.push(await plateau(live));
          },
          afterDrain: async (live) => {
            const after = await plateau(live);
            const start = plateaus[0] ?? { rssBytes: 0, heapBytes: undefined, connected: 0 };
            const gcForced = start.heapBytes !== undefined && after.heapBytes !== undefined;
            const figures: Record<string, number | string | boolean> = {
              gcForced,
              rssBeforeBytes: start.rssBytes,
              rssAfterBytes: after.rssBytes,
              connected: after.connected,
              rssPerConnectionKB: perConnectionKB(start, after, 'rssBytes') ?? 0,
              plateaus: plateaus.map((p) => p.connected).join('/'),
            };
            if (start.heapBytes !== undefined && after.heapBytes !== undefined) {
              figures.heapBeforeBytes = start.heapBytes;
              figures.heapAfterBytes = after.heapBytes;
              figures.heapPerConnectionKB = perConnectionKB(start, after, 'heapBytes') ?? 0;
            }
            const rss = marginalKB(plateaus, 'rssBytes');
            const heap = marginalKB(plateaus, 'heapBytes');
            if (rss) {
              figures.rssMarginalKB = rss.median;
              figures.rssStretchesKB = rss.stretches.join('/');
            }
            if (heap) {
              figures.heapMarginalKB = heap.median;
              figures.heapStretchesKB = heap.stretches.join('/');
            }
            return figures;
          },
        },
      );
    }),
};
