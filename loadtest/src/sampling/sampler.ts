import { monitorEventLoopDelay } from 'node:perf_hooks';
import { readHostCpuMs, readProcStat } from './proc-stat';

export const DEFAULT_SAMPLE_INTERVAL_MS = 500;
/** Above this average the generator (one core) is the bottleneck, not the service. */
export const GENERATOR_SATURATED_CPU_PCT = 85;
/**
 * Other processes took this much of a core on average during a run: the service and the
 * generator were not alone on their cores, so the run is flagged "host busy".
 */
export const HOST_BUSY_OTHER_CPU_PCT = 20;

export interface Sample {
  /** ms since the sampler started */
  readonly tMs: number;
  /** % of one core over the last interval */
  readonly cpuPct: number;
  readonly rssBytes: number;
}

export interface UsageSummary {
  readonly cpuPctAvg: number;
  readonly cpuPctMax: number;
  readonly cpuMsTotal: number;
  readonly rssStartBytes: number;
  readonly rssMaxBytes: number;
  readonly rssEndBytes: number;
  readonly samples: readonly Sample[];
}

export interface GeneratorUsage extends UsageSummary {
  readonly eventLoopDelayP99Ms: number;
  readonly saturated: boolean;
}

type Reading = { cpuMs: number; rssBytes: number } | undefined;

/** Samples CPU % and RSS of a process at a fixed interval, bounded by stop(). */
export class UsageSampler {
  private readonly samples: Sample[] = [];
  private timer?: NodeJS.Timeout;
  private startWall = 0;
  private startCpu = 0;
  private lastWall = 0;
  private lastCpu = 0;
  private rssStart = 0;
  private summary?: UsageSummary;

  constructor(
    private readonly read: () => Reading,
    private readonly intervalMs = DEFAULT_SAMPLE_INTERVAL_MS,
  ) {}

  static forPid(pid: number, intervalMs?: number): UsageSampler {
    return new UsageSampler(() => readProcStat(pid), intervalMs);
  }

  /** The whole host (% of one core, so up to 100 x cores); RSS is not sampled. */
  static host(intervalMs?: number): UsageSampler {
    return new UsageSampler(() => {
      const cpuMs = readHostCpuMs();
      return cpuMs === undefined ? undefined : { cpuMs, rssBytes: 0 };
    }, intervalMs);
  }

  /** This process: process.cpuUsage() counts every thread, as /proc would. */
  static self(intervalMs?: number): UsageSampler {
    return new UsageSampler(() => {
      const u = process.cpuUsage();
      return { cpuMs: (u.user + u.system) / 1000, rssBytes: process.memoryUsage.rss() };
    }, intervalMs);
  }

  start(): void {
    const first = this.read();
    this.startWall = this.lastWall = performance.now();
    this.startCpu = this.lastCpu = first?.cpuMs ?? 0;
    this.rssStart = first?.rssBytes ?? 0;
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  private sample(): void {
    const r = this.read();
    if (!r) return;
    const now = performance.now();
    const wall = now - this.lastWall;
    const cpuPct = wall > 0 ? ((r.cpuMs - this.lastCpu) / wall) * 100 : 0;
    this.samples.push({
      tMs: Math.round(now - this.startWall),
      cpuPct: Math.round(cpuPct * 10) / 10,
      rssBytes: r.rssBytes,
    });
    this.lastWall = now;
    this.lastCpu = r.cpuMs;
  }

  last(): Sample | undefined {
    return this.samples[this.samples.length - 1];
  }

  /** Idempotent: the first call ends sampling and later calls return the same summary. */
  stop(): UsageSummary {
    if (this.summary) return this.summary;
    if (this.timer) clearInterval(this.timer);
    this.sample();
    const wall = this.lastWall - this.startWall;
    const cpuMsTotal = this.lastCpu - this.startCpu;
    const rss = this.samples.map((s) => s.rssBytes);
    this.summary = {
      cpuPctAvg: wall > 0 ? Math.round((cpuMsTotal / wall) * 1000) / 10 : 0,
      cpuPctMax: Math.max(0, ...this.samples.map((s) => s.cpuPct)),
      cpuMsTotal: Math.round(cpuMsTotal),
      rssStartBytes: this.rssStart,
      rssMaxBytes: Math.max(this.rssStart, ...rss),
      rssEndBytes: rss.length > 0 ? rss[rss.length - 1] : this.rssStart,
      samples: this.samples,
    };
    return this.summary;
  }
}

/**
 * The generator watches itself: CPU near one full core or a large event-loop delay means
 * latencies were measured late by the client, so the run is flagged rather than reported
 * as the service's limit.
 */
export class GeneratorMonitor {
  private readonly usage = UsageSampler.self();
  // The histogram's type is named differently across @types/node majors (IntervalHistogram,
  // ELDHistogram); the function's return type is the same on every one.
  private readonly loop: ReturnType<typeof monitorEventLoopDelay> = monitorEventLoopDelay({
    resolution: 10,
  });

  start(): void {
    this.usage.start();
    this.loop.enable();
  }

  stop(): GeneratorUsage {
    this.loop.disable();
    const summary = this.usage.stop();
    const eventLoopDelayP99Ms = Math.round(this.loop.percentile(99) / 1e4) / 100;
    return {
      ...summary,
      eventLoopDelayP99Ms,
      saturated: summary.cpuPctAvg >= GENERATOR_SATURATED_CPU_PCT || eventLoopDelayP99Ms > 100,
    };
  }
}
