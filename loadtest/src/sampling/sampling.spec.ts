import { CoreWindow, coreUsageOver } from './core-window';
import {
  parseCoreCpuMs,
  parseHostCpuMs,
  parseProcStat,
  readHostCpuMs,
  readProcStat,
  CLOCK_TICKS_PER_SEC,
  PAGE_SIZE_BYTES,
} from './proc-stat';
import { parsePromText, promValue } from './prom-text';
import { UsageSampler } from './sampler';

describe('parseProcStat', () => {
  it('counts fields from the last parenthesis (names may contain spaces and parens)', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3)); // field N has value N
    const stat = parseProcStat(`123 (node (x) y) ${fields.join(' ')}`);
    expect(stat.cpuMs).toBe(((14 + 15) * 1000) / CLOCK_TICKS_PER_SEC);
    expect(stat.rssBytes).toBe(24 * PAGE_SIZE_BYTES);
  });

  it('reads this process', () => {
    const s = readProcStat(process.pid);
    expect(s?.rssBytes).toBeGreaterThan(1_000_000);
  });

  it('is undefined for a process that does not exist', () => {
    expect(readProcStat(2 ** 22 + 7)).toBeUndefined();
  });
});

describe('parseHostCpuMs', () => {
  it('sums user, nice, system, irq, softirq and steal; not idle or iowait', () => {
    const text = 'cpu  100 2 30 5000 40 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n';
    expect(parseHostCpuMs(text)).toBe(((100 + 2 + 30 + 6 + 7 + 8) * 1000) / CLOCK_TICKS_PER_SEC);
  });

  it('reads this host', () => {
    expect(readHostCpuMs()).toBeGreaterThan(0);
  });
});

describe('parseCoreCpuMs', () => {
  const text = [
    'cpu  100 2 30 5000 40 6 7 8 0 0',
    'cpu0 60 1 10 2500 20 2 3 4 0 0',
    'cpu1 40 1 20 2500 20 4 40 4 0 0',
    'cpu10 9 9 9 9 9 9 9 9 0 0',
    'intr 12345',
  ].join('\n');

  it("reads one core's line: busy as the host's (not idle or iowait), and its softirq", () => {
    expect(parseCoreCpuMs(text, 1)).toEqual({
      busyMs: ((40 + 1 + 20 + 4 + 40 + 4) * 1000) / CLOCK_TICKS_PER_SEC,
      softirqMs: (40 * 1000) / CLOCK_TICKS_PER_SEC,
    });
  });

  it('does not take cpu10 for cpu1, and is undefined for a core that is not there', () => {
    expect(parseCoreCpuMs(text, 10)?.softirqMs).toBe((9 * 1000) / CLOCK_TICKS_PER_SEC);
    expect(parseCoreCpuMs(text, 3)).toBeUndefined();
  });
});

describe('coreUsageOver / CoreWindow', () => {
  it("gives the window's share of the core, in % of it", () => {
    const start = { busyMs: 1_000, softirqMs: 100 };
    const end = { busyMs: 1_450, softirqMs: 160 };
    expect(coreUsageOver(1, start, end, 500)).toEqual({ core: 1, busyPct: 90, softirqPct: 12 });
    expect(coreUsageOver(1, undefined, end, 500)).toBeUndefined();
    expect(coreUsageOver(1, start, end, 0)).toBeUndefined();
  });

  it('reads the core at begin and end, once per window', () => {
    let busyMs = 0;
    const reads: number[] = [];
    const w = new CoreWindow(1, (core) => {
      reads.push(core);
      return { busyMs, softirqMs: 0 };
    });
    expect(w.end()).toBeUndefined();
    w.begin();
    busyMs = 5;
    const usage = w.end();
    expect(reads).toEqual([1, 1]);
    expect(usage?.core).toBe(1);
    expect(usage?.busyPct).toBeGreaterThan(0);
    expect(w.end()).toBeUndefined();
  });

  /** One /proc/stat tick (USER_HZ is 100 on Linux). */
  const PROC_STAT_TICK_MS = 10;

  it("reads this host's core 0", () => {
    const w = new CoreWindow(0);
    w.begin();
    const t0 = performance.now();
    while (performance.now() - t0 < 30) {
      /* keep core 0 or another one busy: the share is of wall time */
    }
    const usage = w.end();
    const wallMs = performance.now() - t0;
    expect(usage).toMatchObject({ core: 0 });
    expect(usage?.busyPct).toBeGreaterThanOrEqual(0);
    // /proc/stat counts in ticks (USER_HZ, 100 a second): a window this short can read a
    // tick more at each end than it lasted, and no more.
    expect(usage?.busyPct).toBeLessThanOrEqual((100 * (wallMs + 2 * PROC_STAT_TICK_MS)) / wallMs);
  });
});

describe('UsageSampler', () => {
  it('derives CPU % from CPU-time deltas', () => {
    let cpuMs = 0;
    const s = new UsageSampler(() => ({ cpuMs, rssBytes: 100 }), 1_000_000);
    s.start();
    const t0 = performance.now();
    while (performance.now() - t0 < 20) {
      /* let wall time pass */
    }
    cpuMs = 10;
    const summary = s.stop();
    expect(summary.cpuMsTotal).toBe(10);
    expect(summary.cpuPctAvg).toBeGreaterThan(0);
    expect(summary.cpuPctAvg).toBeLessThanOrEqual(50);
    expect(s.stop()).toBe(summary);
  });
});

describe('parsePromText', () => {
  const text = [
    '# HELP order_queue_overflows_total Overflows',
    '# TYPE order_queue_overflows_total counter',
    'order_queue_overflows_total{policy="conflate"} 3',
    'order_queue_overflows_total{policy="drop-oldest"} 2',
    'nodejs_eventloop_lag_p99_seconds 0.012',
    'odd_label{a="x\\"y"} 1',
  ].join('\n');

  it('sums a metric, optionally filtered by labels', () => {
    const samples = parsePromText(text);
    expect(promValue(samples, 'order_queue_overflows_total')).toBe(5);
    expect(promValue(samples, 'order_queue_overflows_total', { policy: 'conflate' })).toBe(3);
    expect(promValue(samples, 'nodejs_eventloop_lag_p99_seconds')).toBe(0.012);
    expect(promValue(samples, 'missing')).toBeUndefined();
    expect(samples.find((s) => s.name === 'odd_label')?.labels.a).toBe('x"y');
  });
});
