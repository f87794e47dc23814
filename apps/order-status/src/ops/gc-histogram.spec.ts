import { PerformanceObserver } from 'node:perf_hooks';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { countEveryGc, GC_DURATION_METRIC } from './gc-histogram';

/** Collections in one synchronous burst: Node delivers them to observers in one callback. */
function scavengeBurst(): void {
  let keep: object[] = [];
  for (let i = 0; i < 3_000_000; i++) {
    keep.push({ i });
    if (keep.length > 100_000) keep = [];
  }
}

/** Collections the histogram has counted, all kinds. */
async function countIn(registry: Registry): Promise<number> {
  const text = await registry.getSingleMetricAsString(GC_DURATION_METRIC);
  const counts = [...text.matchAll(/^nodejs_gc_duration_seconds_count\{[^}]*\} (\d+)$/gm)];
  return counts.reduce((sum, m) => sum + Number(m[1]), 0);
}

describe('countEveryGc', () => {
  // A burst is seconds of CPU on a loaded host (CI: past Jest's 5 s beside the image build);
  // nothing here measures time.
  jest.setTimeout(30_000);

  it('counts every collection of a burst that Node delivers in one observer callback', async () => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const stop = countEveryGc(registry);
    let entries = 0;
    let largestBatch = 0;
    const own = new PerformanceObserver((list) => {
      entries += list.getEntries().length;
      largestBatch = Math.max(largestBatch, list.getEntries().length);
    });
    own.observe({ entryTypes: ['gc'] });
    try {
      // Both observers are delivered the same collections from here on.
      await new Promise((r) => setTimeout(r, 20));
      const before = await countIn(registry);
      const seenBefore = entries;
      largestBatch = 0;
      scavengeBurst();
      await new Promise((r) => setTimeout(r, 100));
      // The case prom-client's own histogram gets wrong: several collections per callback.
      expect(largestBatch).toBeGreaterThan(1);
      expect((await countIn(registry)) - before).toBe(entries - seenBefore);
    } finally {
      own.disconnect();
      stop();
    }
  });

  it('keeps the default metric name, kinds and buckets', async () => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const stop = countEveryGc(registry);
    try {
      scavengeBurst();
      await new Promise((r) => setTimeout(r, 100));
      const text = await registry.getSingleMetricAsString(GC_DURATION_METRIC);
      expect(text).toContain('nodejs_gc_duration_seconds_bucket{le="0.001",kind="minor"}');
      expect(text).toContain('nodejs_gc_duration_seconds_sum{kind="minor"}');
      // Registered once: the default histogram is gone, not shadowed.
      expect(text.match(/^# TYPE /gm)).toHaveLength(1);
    } finally {
      stop();
    }
  });

  it('exports every kind at zero before the first collection', async () => {
    // A reader of the difference between two scrapes needs the series from the first:
    // a labelled histogram without observations is exported as its HELP and TYPE lines only.
    const registry = new Registry();
    const stop = countEveryGc(registry);
    stop();
    const text = await registry.getSingleMetricAsString(GC_DURATION_METRIC);
    for (const kind of ['minor', 'major', 'incremental', 'weakcb']) {
      expect(text).toContain(`nodejs_gc_duration_seconds_count{kind="${kind}"} 0`);
      expect(text).toContain(`nodejs_gc_duration_seconds_sum{kind="${kind}"} 0`);
    }
  });

  it('stops observing when asked', async () => {
    const registry = new Registry();
    const stop = countEveryGc(registry);
    stop();
    const before = await countIn(registry);
    scavengeBurst();
    await new Promise((r) => setTimeout(r, 100));
    expect(await countIn(registry)).toBe(before);
  });
});
