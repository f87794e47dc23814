import { PerformanceObserver } from 'node:perf_hooks';
import { gcTotals } from '../sampling/gc-window';
import { parsePromText } from '../sampling/prom-text';
import { metricsText } from './bare-api';

const totals = () => gcTotals(parsePromText(metricsText()));

describe('bare servers /metrics', () => {
  it('reports the GC histogram from the first scrape, counting every collection', async () => {
    expect(totals()).toBeDefined();
    let entries = 0;
    const own = new PerformanceObserver((list) => (entries += list.getEntries().length));
    own.observe({ entryTypes: ['gc'] });
    try {
      // Both observers are delivered the same collections from here on.
      await new Promise((r) => setTimeout(r, 20));
      const first = totals();
      const seenBefore = entries;
      // A synchronous burst: Node reports its collections to observers together.
      let keep: object[] = [];
      for (let i = 0; i < 3_000_000; i++) {
        keep.push({ i });
        if (keep.length > 100_000) keep = [];
      }
      await new Promise((r) => setTimeout(r, 100));
      expect(entries - seenBefore).toBeGreaterThan(1);
      expect((totals()?.count ?? 0) - (first?.count ?? 0)).toBe(entries - seenBefore);
    } finally {
      own.disconnect();
    }
  });
});
