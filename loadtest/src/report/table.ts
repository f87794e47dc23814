import type { RunResult } from '../scenarios/result';

export interface Column {
  readonly title: string;
  readonly value: (r: RunResult) => string;
}

const n = (v: number | null | undefined, digits = 1): string =>
  v === null || v === undefined ? '-' : Number.isInteger(v) ? String(v) : v.toFixed(digits);
const kb = (b: number | null | undefined): number | undefined =>
  b === null || b === undefined ? undefined : b / 1024;
const mb = (b: number): string => (b > 0 ? (b / 1048576).toFixed(0) : '-');

/** The summary columns, shared by the console, Markdown and HTML tables. */
export const COLUMNS: readonly Column[] = [
  { title: 'scenario', value: (r) => r.scenario + (r.server === 'nest' ? '' : ` (${r.server})`) },
  { title: 'variant', value: (r) => r.variant || '-' },
  { title: 'transport', value: (r) => r.transport },
  { title: 'subs', value: (r) => String(r.settings.subscribers) },
  { title: 'ev/s got/exp', value: (r) => `${r.events.perSec}/${r.events.expectedPerSec}` },
  { title: 'p50 ms', value: (r) => n(r.latency.p50Ms, 2) },
  { title: 'p90', value: (r) => n(r.latency.p90Ms, 2) },
  { title: 'p99', value: (r) => n(r.latency.p99Ms, 2) },
  { title: 'p99.9', value: (r) => n(r.latency.p999Ms, 2) },
  { title: 'max', value: (r) => n(r.latency.maxMs, 1) },
  { title: 'lost', value: (r) => String(r.events.lost) },
  { title: 'skipped', value: (r) => String(r.events.skipped ?? 0) },
  { title: 'dup', value: (r) => String(r.events.duplicates) },
  { title: 'ooo', value: (r) => String(r.events.outOfOrder) },
  { title: 'svc CPU %', value: (r) => n(r.service.cpuPctAvg) },
  // Beside the service's: a generator near its own core's limit measured itself.
  { title: 'gen CPU %', value: (r) => n(r.generator.cpuPctAvg) },
  { title: 'CPU ms/1k ev', value: (r) => n(r.service.cpuMsPer1kEvents) },
  { title: 'heap KB/ev', value: (r) => n(kb(r.service.heapBytesPerEvent), 2) },
  { title: 'RSS MB', value: (r) => mb(r.service.rssMaxBytes) },
  { title: 'EL p99 ms', value: (r) => n(r.service.eventLoopLagP99Ms) },
  // The collector's share of the server's time, and the mark-compacts behind long pauses.
  { title: 'GC ms/s', value: (r) => n(r.service.gc?.pauseMsPerS) },
  { title: 'major GCs', value: (r) => n(r.service.gc?.majorCollections) },
  { title: 'B/event', value: (r) => n(r.wire?.perEvent) },
  { title: 'req/s', value: (r) => n(r.requestsPerSec) },
  { title: 'connect p99 ms', value: (r) => n(r.connectMs.p99) },
  { title: 'errors', value: (r) => String(Object.values(r.errors).reduce((a, b) => a + b, 0)) },
  { title: 'note', value: note },
];

/**
 * The server's core is named when it was this much busier than the server's process
 * (points of a core): kernel work there that the process was not charged for
 * (`ksoftirqd`), or another process (core-window.ts). Below it the two read alike.
 */
export const SERVER_CORE_NOTE_PCT = 10;

export function note(r: RunResult): string {
  const parts: string[] = [];
  if (!r.ok) parts.push(`FAILED: ${r.error ?? ''}`.slice(0, 80));
  if (r.generator.saturated) parts.push(`generator saturated (${r.generator.cpuPctAvg}% CPU)`);
  if (r.host?.busy) parts.push(`host busy (others ${r.host.otherCpuPctAvg}% CPU)`);
  const core = r.host?.serverCore;
  if (core !== undefined && core.busyPct - r.service.cpuPctAvg >= SERVER_CORE_NOTE_PCT) {
    parts.push(`server's core ${core.busyPct}% busy`);
  }
  if (r.host?.helperCpuPctAvg !== undefined) {
    parts.push(`publisher ${r.host.helperCpuPctAvg}% CPU`);
  }
  if (r.scenario === 'idle' && r.extra) {
    const { heapPerConnectionKB: heap, rssMarginalKB, heapMarginalKB } = r.extra;
    parts.push(
      `${String(r.extra.rssPerConnectionKB)} KB/conn` +
        (heap !== undefined ? ` (heap ${String(heap)} KB)` : ''),
    );
    // What one more connection costs a warm service (idle.ts: median over the stretches).
    if (rssMarginalKB !== undefined) {
      parts.push(
        `marginal ${String(rssMarginalKB)} KB` +
          (heapMarginalKB !== undefined ? ` (heap ${String(heapMarginalKB)} KB)` : ''),
      );
    }
  }
  if (r.scenario === 'reconnect') parts.push(`reconnect p99 ${r.reconnectMs.p99} ms`);
  if (r.scenario === 'scale' && r.extra) parts.push(r.extra.clean ? 'clean' : 'bound passed');
  if (r.scenario === 'slow-consumer' && r.extra && r.variant !== 'baseline') {
    parts.push(`slow: ${String(r.extra.slowReceived)}/${String(r.extra.slowDue)} received`);
  }
  // Where the events went: app2 does not publish, so its share is the cross-instance path.
  if (r.scenario === 'cluster' && r.extra)
    parts.push(
      `delivered app1/app2 ${String(r.extra.app1Delivered)}/${String(r.extra.app2Delivered)}`,
    );
  if (r.scenario === 'unary' && r.extra)
    parts.push(`${String(r.extra.calls)} calls in ${String(r.extra.totalMs)} ms`);
  return parts.join('; ');
}

export function rows(runs: readonly RunResult[]): string[][] {
  return runs.map((r) => COLUMNS.map((c) => c.value(r)));
}

/** Fixed-width text table for the console. */
export function consoleTable(runs: readonly RunResult[]): string {
  const body = rows(runs);
  const header = COLUMNS.map((c) => c.title);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

export function markdownTable(
  runs: readonly RunResult[],
  columns: readonly Column[] = COLUMNS,
): string {
  const esc = (s: string): string => s.replace(/\|/g, '\\|');
  return [
    `| ${columns.map((c) => c.title).join(' | ')} |`,
    `|${columns.map(() => '---').join('|')}|`,
    ...runs.map((r) => `| ${columns.map((c) => esc(c.value(r))).join(' | ')} |`),
  ].join('\n');
}
