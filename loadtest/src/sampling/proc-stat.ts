import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

function getconf(name: string, fallback: number): number {
  try {
    const value = Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim());
    return Number.isFinite(value) && value > 0 ? value : fallback;
  } catch {
    return fallback;
  }
}

/** Kernel clock ticks per second (utime/stime unit) and page size (rss unit), read once. */
export const CLOCK_TICKS_PER_SEC = getconf('CLK_TCK', 100);
export const PAGE_SIZE_BYTES = getconf('PAGESIZE', 4096);

export interface ProcStat {
  /** user + system CPU time consumed so far, ms */
  readonly cpuMs: number;
  readonly rssBytes: number;
}

/**
 * Parses /proc/<pid>/stat (proc(5)). The command name (field 2) may contain spaces and
 * parentheses, so fields are counted from the last ')'.
 */
export function parseProcStat(text: string): ProcStat {
  const close = text.lastIndexOf(')');
  if (close < 0) throw new Error('malformed /proc/<pid>/stat');
  // After ')': field 3 (state) is index 0, so field N is index N - 3.
  const fields = text.slice(close + 2).split(' ');
  const utime = Number(fields[14 - 3]);
  const stime = Number(fields[15 - 3]);
  const rssPages = Number(fields[24 - 3]);
  return {
    cpuMs: ((utime + stime) * 1000) / CLOCK_TICKS_PER_SEC,
    rssBytes: rssPages * PAGE_SIZE_BYTES,
  };
}

/**
 * Busy CPU time of the whole host so far, ms summed over cores, from the first line of
 * /proc/stat (user nice system idle iowait irq softirq steal ...; idle and iowait are not
 * busy). Lets a run tell how much of the host other processes took meanwhile.
 */
export function parseHostCpuMs(text: string): number {
  const line = text.slice(0, text.indexOf('\n'));
  return ticksToMs(busyTicks(line.trim().split(/\s+/).slice(1).map(Number)));
}

/** One core's CPU time so far, ms: all that ran on it (busy), and the softirq part of that. */
export interface CoreCpuMs {
  readonly busyMs: number;
  readonly softirqMs: number;
}

/**
 * One core's line of /proc/stat (`cpuN`), read like the host's. The server's core also
 * runs kernel work that its process is not charged for (`ksoftirqd`) and other
 * processes: its busy share says what the server had left, whatever its own CPU time says.
 */
export function parseCoreCpuMs(text: string, core: number): CoreCpuMs | undefined {
  const prefix = `cpu${core} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  if (line === undefined) return undefined;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  return { busyMs: ticksToMs(busyTicks(f)), softirqMs: ticksToMs(f[6] ?? 0) };
}

export function readCoreCpuMs(core: number): CoreCpuMs | undefined {
  try {
    return parseCoreCpuMs(readFileSync('/proc/stat', 'utf8'), core);
  } catch {
    return undefined;
  }
}

/** user + nice + system + irq + softirq + steal of a /proc/stat line's numbers. */
function busyTicks(f: readonly number[]): number {
  return f[0] + f[1] + f[2] + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
}

function ticksToMs(ticks: number): number {
  return (ticks * 1000) / CLOCK_TICKS_PER_SEC;
}

export function readHostCpuMs(): number | undefined {
  try {
    return parseHostCpuMs(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

/** Undefined once the process is gone. */
export function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}
