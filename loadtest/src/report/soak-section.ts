import type { RunResult } from '../scenarios/result';
import type { MemoryTrend } from '../soak/memory-trend';

const trendText = (t: MemoryTrend | null): string =>
  t === null
    ? 'not measured (fewer than three readings)'
    : `${t.mbPerHour} ± ${t.stdErrorMbPerHour} MB/h over ${t.points} readings, ${t.flat ? 'flat within noise' : 'growing'}`;

const cell = (v: number | undefined): string => (v === undefined ? '-' : String(v));

/**
 * The soak's own part of the Markdown report: verdict, memory slopes, churn and publish
 * counts, then one row per reading. Empty for a report without a soak run.
 */
export function soakSection(runs: readonly RunResult[]): string[] {
  const s = runs.find((r) => r.soak !== undefined)?.soak;
  if (s === undefined) return [];
  const window = `last ${Math.round(s.slopeWindowS / 60)} min (or the whole run if shorter)`;
  const p = s.publishes;
  return [
    `**Verdict: ${s.verdict.text}.**`,
    '',
    `- Heap after forced GC, least-squares slope over the ${window}: ${trendText(s.heap)}.`,
    `- RSS, same window: ${trendText(s.rss)}.`,
    `- Publishes: REST ${p.rest.ok} ok / ${p.rest.retried} retried / ${p.rest.failed} failed, gRPC ${p.grpc.ok} ok / ${p.grpc.retried} retried / ${p.grpc.failed} failed${s.publishErrors.length > 0 ? ` (last errors: ${s.publishErrors.join('; ')})` : ''}.`,
    `- Churn: ${s.tokenRenewals} token renewals, ${s.forcedDrops} client drops; the rows above give each transport's server ends and errors.`,
    '',
    `Readings every ${s.sampleEveryS} s (event-loop delay: the service's own histogram since the previous reading, the forced GC excluded):`,
    '',
    '| t s | heap MB after GC | RSS MB | CPU % | loop p99 ms | loop max ms | connected | delivered | published |',
    '|---|---|---|---|---|---|---|---|---|',
    ...s.samples.map(
      (x) =>
        `| ${x.tS} | ${cell(x.heapMB)} | ${x.rssMB} | ${x.cpuPct} | ${cell(x.loopP99Ms)} | ${cell(x.loopMaxMs)} | ${x.connected} | ${x.delivered} | ${cell(x.published)} |`,
    ),
    '',
  ];
}
