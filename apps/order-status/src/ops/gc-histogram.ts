import { constants, PerformanceObserver } from 'node:perf_hooks';
import { Histogram, type Registry } from 'prom-client';

/** prom-client's name for it, kept so that dashboards built on the default metric still work. */
export const GC_DURATION_METRIC = 'nodejs_gc_duration_seconds';

/** prom-client's buckets (seconds). */
const BUCKETS = [0.001, 0.01, 0.1, 1, 2, 5];

const KINDS: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/**
 * Puts a GC histogram that counts every collection in place of prom-client's default one.
 *
 * Why: Node hands a PerformanceObserver every collection since its last callback at
 * once, and prom-client's observer records only the first entry of each callback. A
 * burst of scavenges inside one long task (an event fanned out to thousands of
 * subscribers, a connection storm) then reads as one short collection, exactly when GC
 * matters. Same name, label and buckets, so a dashboard built on the default metric
 * keeps working and now adds up.
 * @returns stops observing (the app's shutdown)
 */
export function countEveryGc(registry: Registry): () => void {
  registry.removeSingleMetric(GC_DURATION_METRIC);
  const histogram = new Histogram({
    name: GC_DURATION_METRIC,
    help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    labelNames: ['kind'],
    buckets: BUCKETS,
    registers: [registry],
  });
  // Every series from the first scrape: a reader of the difference between two scrapes
  // would otherwise find none where no collection had happened yet.
  for (const kind of Object.values(KINDS)) histogram.zero({ kind });
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      // Node's GC entries carry their kind in `detail` (not in @types/node's base type).
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
      histogram.observe({ kind: KINDS[kind ?? -1] ?? 'unknown' }, entry.duration / 1000);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}
