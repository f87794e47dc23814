import { promValue, type PromSample } from './prom-text';

/** The GC histogram the service and the bare servers export (prom-client's name). */
export const GC_DURATION_METRIC = 'nodejs_gc_duration_seconds';

/** A server's garbage collections since it started, as its /metrics reports them. */
export interface GcTotals {
  readonly pauseS: number;
  readonly count: number;
  /** Mark-compacts: the collections whose pause grows with everything the process keeps. */
  readonly majorPauseS: number;
  readonly majorCount: number;
}

/** What the collector cost a server over a measured window. */
export interface GcUsage {
  /** Every kind's pauses (scavenges, mark-compacts, incremental steps), ms per second. */
  readonly pauseMsPerS: number;
  readonly collections: number;
  readonly majorCollections: number;
  readonly majorPauseMs: number;
}

/** The totals in one scrape; undefined for a server that does not export the histogram. */
export function gcTotals(samples: readonly PromSample[]): GcTotals | undefined {
  const pauseS = promValue(samples, `${GC_DURATION_METRIC}_sum`);
  const count = promValue(samples, `${GC_DURATION_METRIC}_count`);
  if (pauseS === undefined || count === undefined) return undefined;
  const major = { kind: 'major' };
  return {
    pauseS,
    count,
    majorPauseS: promValue(samples, `${GC_DURATION_METRIC}_sum`, major) ?? 0,
    majorCount: promValue(samples, `${GC_DURATION_METRIC}_count`, major) ?? 0,
  };
}

/** The window's share, from the totals read at its start and at its end. */
export function gcOver(
  start: GcTotals | undefined,
  end: GcTotals | undefined,
  windowS: number,
): GcUsage | null {
  if (start === undefined || end === undefined || windowS <= 0) return null;
  const ms = (s: number) => Math.round(s * 1e5) / 100;
  return {
    pauseMsPerS: ms((end.pauseS - start.pauseS) / windowS),
    collections: end.count - start.count,
    majorCollections: end.majorCount - start.majorCount,
    majorPauseMs: ms(end.majorPauseS - start.majorPauseS),
  };
}
