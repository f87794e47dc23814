import { type CoreCpuMs, readCoreCpuMs } from './proc-stat';

/**
 * The server's core over a measured window, whatever ran on it: the server's process,
 * and kernel work its process is not charged for. A softirq that interrupts the process
 * is charged to it; what is not is the softirq work left to `ksoftirqd`, a thread that
 * takes turns with the server's on its core. On one host that is mostly TCP's work for
 * the clients (a client that has not read yet is acknowledged by a timer on the core
 * that received the segment: the server's), and another process pinned there.
 */
export interface CoreUsage {
  readonly core: number;
  /** % of the core busy (user, system, irq, softirq, steal), everything on it. */
  readonly busyPct: number;
  /** The softirq part of that, % of the core. */
  readonly softirqPct: number;
}

/** The window's share of one core, from its times at the start and at the end. */
export function coreUsageOver(
  core: number,
  start: CoreCpuMs | undefined,
  end: CoreCpuMs | undefined,
  wallMs: number,
): CoreUsage | undefined {
  if (start === undefined || end === undefined || wallMs <= 0) return undefined;
  const pct = (ms: number) => Math.round((Math.max(0, ms) / wallMs) * 1000) / 10;
  return {
    core,
    busyPct: pct(end.busyMs - start.busyMs),
    softirqPct: pct(end.softirqMs - start.softirqMs),
  };
}

/** Reads one core at the window's start and end (two reads of /proc/stat). */
export class CoreWindow {
  private startAt = 0;
  private start: CoreCpuMs | undefined;

  constructor(
    readonly core: number,
    private readonly read: (core: number) => CoreCpuMs | undefined = readCoreCpuMs,
  ) {}

  begin(): void {
    this.start = this.read(this.core);
    this.startAt = performance.now();
  }

  /** Undefined when the window never began or the core could not be read. */
  end(): CoreUsage | undefined {
    if (this.start === undefined) return undefined;
    const usage = coreUsageOver(
      this.core,
      this.start,
      this.read(this.core),
      performance.now() - this.startAt,
    );
    this.start = undefined;
    return usage;
  }
}
