import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { gcOver, gcTotals, GC_DURATION_METRIC } from './gc-window';
import { parsePromText } from './prom-text';

/** A registry exporting the histogram as the service does, with chosen observations. */
function registryWith(observations: readonly [kind: string, seconds: number][]): Registry {
  const registry = new Registry();
  const h = new Histogram({
    name: GC_DURATION_METRIC,
    help: 'gc',
    labelNames: ['kind'],
    buckets: [0.001, 0.01, 0.1, 1, 2, 5],
    registers: [registry],
  });
  for (const [kind, s] of observations) h.observe({ kind }, s);
  return registry;
}

const totalsOf = async (r: Registry) => gcTotals(parsePromText(await r.metrics()));

describe('gc window', () => {
  it('reads all kinds and mark-compacts apart from prom-client text', async () => {
    const t = await totalsOf(
      registryWith([
        ['minor', 0.002],
        ['minor', 0.003],
        ['incremental', 0.001],
        ['major', 0.04],
      ]),
    );
    expect(t).toEqual({
      pauseS: expect.closeTo(0.046, 9),
      count: 4,
      majorPauseS: expect.closeTo(0.04, 9),
      majorCount: 1,
    });
  });

  it('gives the window its own share, pauses per second of window', () => {
    const start = { pauseS: 1, count: 10, majorPauseS: 0.1, majorCount: 1 };
    const end = { pauseS: 1.5, count: 60, majorPauseS: 0.175, majorCount: 3 };
    expect(gcOver(start, end, 5)).toEqual({
      pauseMsPerS: 100,
      collections: 50,
      majorCollections: 2,
      majorPauseMs: 75,
    });
  });

  it('is absent for a server without the histogram, or without a window', async () => {
    const none = new Registry();
    collectDefaultMetrics({ register: none });
    none.removeSingleMetric(GC_DURATION_METRIC);
    expect(await totalsOf(none)).toBeUndefined();
    const t = { pauseS: 0, count: 0, majorPauseS: 0, majorCount: 0 };
    expect(gcOver(undefined, t, 5)).toBeNull();
    expect(gcOver(t, t, 0)).toBeNull();
  });
});
