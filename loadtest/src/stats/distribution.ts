/** Small-sample percentiles (connect and reconnect times: one sample per subscriber). */
export interface Distribution {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

export function distribution(samples: readonly number[]): Distribution {
  if (samples.length === 0) return { count: 0, p50: 0, p99: 0, max: 0, mean: 0 };
  const sorted = [...samples].sort((a, b) => a - b);
  // Nearest-rank percentile: the smallest sample with at least p% of samples at or below it.
  const at = (p: number): number => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
  const sum = sorted.reduce((a, b) => a + b, 0);
  const round = (v: number): number => Math.round(v * 1000) / 1000;
  return {
    count: sorted.length,
    p50: round(at(50)),
    p99: round(at(99)),
    max: round(sorted[sorted.length - 1]),
    mean: round(sum / sorted.length),
  };
}

/** Counts by key, e.g. errors by code. */
export class Counter {
  private readonly counts = new Map<string, number>();

  add(key: string, n = 1): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + n);
  }

  get total(): number {
    let t = 0;
    for (const v of this.counts.values()) t += v;
    return t;
  }

  toJSON(): Record<string, number> {
    return Object.fromEntries([...this.counts.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }
}
