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

/** Undefined once the process is gone. */
export function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}
