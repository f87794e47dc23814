import { Histogram, type HistogramConfiguration } from 'prom-client';
import { nowUs } from '@app/contracts';

/**
 * Upper bounds (seconds) of the publish-to-write latency buckets: sub-millisecond for an
 * in-process bus, up to seconds for a client stalled behind back-pressure.
 */
export const DELIVERY_LATENCY_BUCKETS_S: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/** One transport's counts: `counts[i]` events fell in bucket i (the last slot is +Inf). */
interface Series {
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

type Label = 'transport';
type Exported = Awaited<ReturnType<Histogram<Label>['get']>>;
type ExportedValue = Exported['values'][number];

/**
 * `order_delivery_latency_seconds{transport}`: time from publish to the transport's
 * write, recorded through `BusStats.onDeliver` for every live event.
 *
 * prom-client's own `observe()` builds a label object and a hash string per call, which
 * at tens of thousands of events per second is garbage the delivery path should not
 * make. Here each transport has a preallocated array of bucket counts; `record()` only
 * does arithmetic, and the exposition is built at scrape time by overriding the export
 * (the same shape prom-client's Histogram exports, so the registry renders it as usual).
 */
export class DeliveryLatencyHistogram extends Histogram<Label> {
  private readonly series = new Map<string, Series>();
  private readonly bounds = DELIVERY_LATENCY_BUCKETS_S;

  constructor(
    private readonly opts: { name: string; help: string } & Pick<
      HistogramConfiguration<Label>,
      'registers'
    >,
  ) {
    super({ ...opts, labelNames: ['transport'], buckets: [...DELIVERY_LATENCY_BUCKETS_S] });
  }

  /** Hot path: no allocation once the transport has been seen. */
  record(transport: string, publishedAtUs: number): void {
    let s = this.series.get(transport);
    if (s === undefined) {
      s = { counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
      this.series.set(transport, s);
    }
    // Clamped: with a shared store the publisher's clock may run slightly ahead of ours.
    const seconds = Math.max(0, nowUs() - publishedAtUs) / 1e6;
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]) i++;
    s.counts[i]++;
    s.sum += seconds;
    s.count++;
  }

  override reset(): void {
    // prom-client's constructor calls reset() before this class's fields exist.
    (this.series as Map<string, Series> | undefined)?.clear();
  }

  override async get(): Promise<Exported> {
    return this.getForPromString();
  }

  /** What the registry reads to render the text format (prom-client calls it when present). */
  async getForPromString(): Promise<Exported> {
    const { name, help } = this.opts;
    const values: ExportedValue[] = [];
    for (const [transport, s] of this.series) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i];
        values.push(pair(`${name}_bucket`, { transport, le }, cumulative));
      });
      values.push(pair(`${name}_bucket`, { transport, le: '+Inf' }, s.count));
      values.push(pair(`${name}_sum`, { transport }, s.sum));
      values.push(pair(`${name}_count`, { transport }, s.count));
    }
    // prom-client's typings omit fields its exporter reads and require ones it does not.
    return { name, help, type: 'histogram', values, aggregator: 'sum' } as unknown as Exported;
  }
}

/** prom-client's exported value shape (`sharedLabels` is read by `get()` consumers). */
function pair(
  metricName: string,
  labels: Record<string, string | number>,
  value: number,
): ExportedValue {
  return { metricName, labels, value, sharedLabels: {} } as ExportedValue;
}
