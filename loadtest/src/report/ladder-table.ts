import type { TransportName } from '../clients/transport';
import { LADDER_RUNGS, rungApplies, type LadderRung } from '../ladder/rungs';
import type { RunResult } from '../scenarios/result';
import { median } from './targets';

/** One rung of one transport's ladder, from the rounds that ran it. */
export interface LadderStep {
  readonly transport: TransportName;
  readonly rung: LadderRung;
  /** Rounds with a figure (ok runs with a CPU per delivery). */
  readonly rounds: number;
  /** Server CPU µs per delivered event, median of the rounds. */
  readonly usPerDelivery: number | undefined;
  /** Long-poll: server CPU µs per request answered (a poll can carry several events). */
  readonly usPerRequest: number | undefined;
  readonly p99Ms: number | undefined;
  /** Heap bytes allocated per delivery (Node 26+ servers), median of the rounds. */
  readonly heapBytes: number | undefined;
  /** Long-poll: heap bytes allocated per request answered. */
  readonly heapBytesPerRequest: number | undefined;
  /**
   * What this rung adds to the one below it that ran: the median over rounds of the
   * difference within a round (the two ran one after the other), in µs and in % of the
   * lower rung's figure. Per request for long-poll, whose events per answer vary from run
   * to run (a poll answers with everything since `after`), per delivery for streams.
   */
  readonly marginalUs: number | undefined;
  readonly marginalPct: number | undefined;
  /** Runs flagged "host busy" or "generator saturated", of `rounds`. */
  readonly flagged: number;
}

const round2 = (v: number): number => Math.round(v * 100) / 100;

/** CPU ms per 1,000 delivered events is µs per delivery. */
const usOf = (r: RunResult): number | undefined =>
  r.ok && typeof r.service.cpuMsPer1kEvents === 'number' && r.service.cpuMsPer1kEvents > 0
    ? r.service.cpuMsPer1kEvents
    : undefined;

/** What a request is charged: a per-delivery figure times the deliveries per request. */
const perRequest = (r: RunResult, perDelivery: number | undefined): number | undefined =>
  perDelivery === undefined || r.requestsPerSec <= 0
    ? undefined
    : (perDelivery * r.events.perSec) / r.requestsPerSec;

const medianOf = (values: readonly (number | undefined)[]): number | undefined => {
  const known = values.filter((v): v is number => v !== undefined && Number.isFinite(v));
  return known.length === 0 ? undefined : round2(median(known));
};

/**
 * Every transport's ladder, bottom to top: each rung that applies to the transport, with
 * its medians and its marginal cost over the rung below it that ran (unavailable rungs
 * and rungs without runs have no figures and are skipped as the base of the next).
 */
export function ladderSteps(runs: readonly RunResult[]): LadderStep[] {
  const ladderRuns = runs.filter((r) => r.scenario === 'ladder');
  const transports = [...new Set(ladderRuns.map((r) => r.transport))];
  const out: LadderStep[] = [];
  for (const transport of transports) {
    const polls = transport.startsWith('longpoll');
    /** The transport's unit of cost: per request for long-poll, per delivery for streams. */
    const costOf = (r: RunResult): number | undefined => (polls ? perRequest(r, usOf(r)) : usOf(r));
    let below: readonly RunResult[] | undefined;
    for (const rung of LADDER_RUNGS.filter((g) => rungApplies(g, transport))) {
      const mine = ladderRuns.filter((r) => r.transport === transport && r.extra?.rung === rung.id);
      const diffs: number[] = [];
      const pcts: number[] = [];
      for (const r of mine) {
        const base = below?.find((b) => b.extra?.round === r.extra?.round);
        const [a, b] = [costOf(r), base === undefined ? undefined : costOf(base)];
        if (a === undefined || b === undefined) continue;
        diffs.push(a - b);
        pcts.push(((a - b) / b) * 100);
      }
      out.push({
        transport,
        rung,
        rounds: mine.filter((r) => usOf(r) !== undefined).length,
        usPerDelivery: medianOf(mine.map(usOf)),
        usPerRequest: polls ? medianOf(mine.map((r) => perRequest(r, usOf(r)))) : undefined,
        p99Ms: medianOf(mine.filter((r) => r.ok).map((r) => r.latency.p99Ms)),
        heapBytes: medianOf(mine.map((r) => r.service.heapBytesPerEvent ?? undefined)),
        heapBytesPerRequest: polls
          ? medianOf(mine.map((r) => perRequest(r, r.service.heapBytesPerEvent ?? undefined)))
          : undefined,
        marginalUs: medianOf(diffs),
        marginalPct: medianOf(pcts),
        flagged: mine.filter((r) => r.host?.busy === true || r.generator.saturated).length,
      });
      if (mine.some((r) => usOf(r) !== undefined)) below = mine;
    }
  }
  return out;
}

const cell = (v: number | undefined, digits = 1): string =>
  v === undefined ? '-' : v.toFixed(digits);
const signed = (v: number | undefined, unit: string): string =>
  v === undefined ? '-' : `${v >= 0 ? '+' : ''}${v.toFixed(1)}${unit}`;

/** What a rung that the stored run predates, or left out, shows instead of figures. */
const NOT_RUN = 'not in this run';

/** The ladder as one Markdown table: a row per transport and rung. */
export function ladderLines(runs: readonly RunResult[]): string[] {
  const steps = ladderSteps(runs);
  if (steps.length === 0) return [];
  return [
    '| transport | rung | adds | rounds | CPU µs / delivery | CPU µs / request | marginal µs | marginal % | p99 ms | heap B / delivery | heap B / request | flagged |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...steps.map((s) =>
      s.rung.unavailable !== undefined || s.rounds === 0
        ? `| ${s.transport} | ${s.rung.label} | ${s.rung.adds} | ${s.rung.unavailable ?? NOT_RUN} | - | - | - | - | - | - | - | - |`
        : `| ${s.transport} | ${s.rung.label} | ${s.rung.adds} | ${s.rounds} | ${cell(s.usPerDelivery)} | ` +
          `${cell(s.usPerRequest)} | ${signed(s.marginalUs, '')} | ${signed(s.marginalPct, ' %')} | ` +
          `${cell(s.p99Ms, 2)} | ${cell(s.heapBytes, 0)} | ${cell(s.heapBytesPerRequest, 0)} | ${s.flagged} |`,
    ),
  ];
}

/** The HTML report's chart: CPU µs per delivery per rung, a bar series per transport. */
export function ladderChart(
  runs: readonly RunResult[],
): { id: string; title: string; config: unknown }[] {
  const steps = ladderSteps(runs).filter((s) => s.usPerDelivery !== undefined);
  if (steps.length === 0) return [];
  const labels = LADDER_RUNGS.filter((g) => steps.some((s) => s.rung.id === g.id)).map(
    (g) => g.label,
  );
  const transports = [...new Set(steps.map((s) => s.transport))];
  return [
    {
      id: 'ladder',
      title:
        'ladder: server CPU µs per delivery (long-poll: per request), rung by rung (medians of rounds)',
      config: {
        type: 'bar',
        data: {
          labels,
          datasets: transports.map((t) => ({
            label: t,
            data: labels.map((l) => {
              const step = steps.find((s) => s.transport === t && s.rung.label === l);
              return step?.usPerRequest ?? step?.usPerDelivery ?? null;
            }),
          })),
        },
        options: { scales: { y: { title: { display: true, text: 'µs per delivery' } } } },
      },
    },
  ];
}
