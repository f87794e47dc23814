import type { RunResult } from '../scenarios/result';
import type { ServerKind } from '../scenarios/run-options';
import { median } from './targets';

/**
 * Service CPU per delivery over the bare Node server's, the issue's targets for the
 * broadcast case (one event, many writes): SSE <= 1.10, socket.io <= 1.15, the raw
 * WebSocket <= 1.10 (issue 34, against a bare `ws` broadcaster), gRPC <= 1.10;
 * long-poll's cost per poll over the bare long-poll server's (its floor) <= 1.25.
 */
export const OVER_BARE_TARGETS: Readonly<Record<string, number>> = {
  sse: 1.1,
  'sse-h2': 1.1,
  ws: 1.15,
  websocket: 1.1,
  grpc: 1.1,
  longpoll: 1.25,
  'longpoll-h2': 1.25,
};

export interface ServerComparison {
  readonly scenario: string;
  readonly transport: string;
  /** Orders the subscribers spread over (broadcast), or undefined (overhead). */
  readonly orders: number | undefined;
  readonly subscribers: number;
  /** CPU µs per delivery, each round, per server (rounded to 0.01). */
  readonly rounds: Partial<Record<ServerKind, number[]>>;
  /** Medians of the rounds. */
  readonly medians: Partial<Record<ServerKind, number>>;
  /** Service over bare, and over Nchan, on the medians. */
  readonly overBare: number | undefined;
  readonly overNchan: number | undefined;
  /**
   * Service over bare within each round (the two ran one after the other), and the
   * median of those: a host whose speed drifts between rounds moves both figures of a
   * round together, so the pairs keep the ratio that the medians of each server lose.
   */
  readonly overBarePerRound: number[];
  readonly overBarePaired: number | undefined;
  /**
   * Long-poll, each the median of the per-round ratios: service over the NestJS floor
   * (what the service adds to NestJS on Fastify), the NestJS floor over bare Node (what
   * the framework adds to Node), split into the Fastify floor over bare Node (Fastify)
   * and the NestJS floor over the Fastify floor (Nest's router, guard and handler chain).
   */
  readonly overFloorPaired: number | undefined;
  readonly floorOverBarePaired: number | undefined;
  readonly fastifyOverBarePaired: number | undefined;
  readonly floorOverFastifyPaired: number | undefined;
  /**
   * Heap bytes allocated per delivery, median of the rounds, per server (Node 26+; none
   * where the runtime does not report it, and never for Nchan), and service over bare.
   * It does not drift with the host's speed as CPU time does.
   */
  readonly heapBytes: Partial<Record<ServerKind, number>>;
  readonly heapOverBare: number | undefined;
  readonly target: number | undefined;
  /** Runs of the group whose generator saturated, or whose host was busy. */
  readonly saturated: number;
  readonly busy: number;
  readonly runs: number;
}

const round2 = (v: number): number => Math.round(v * 100) / 100;

/** CPU ms per 1,000 deliveries is µs per delivery. */
const usPerDelivery = (r: RunResult): number | undefined =>
  typeof r.service.cpuMsPer1kEvents === 'number' && r.service.cpuMsPer1kEvents > 0
    ? r.service.cpuMsPer1kEvents
    : undefined;

/** The overhead and broadcast runs grouped by (scenario, transport, orders), servers side by side. */
export function serverComparisons(runs: readonly RunResult[]): ServerComparison[] {
  const groups = new Map<string, RunResult[]>();
  for (const r of runs) {
    if ((r.scenario !== 'overhead' && r.scenario !== 'broadcast') || !r.ok) continue;
    const orders = r.scenario === 'broadcast' ? Number(r.extra?.orders) : undefined;
    const key = `${r.scenario}|${r.transport}|${orders ?? ''}|${r.settings.subscribers}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const out: ServerComparison[] = [];
  for (const group of groups.values()) {
    const first = group[0];
    const rounds: Partial<Record<ServerKind, number[]>> = {};
    // The same figures by round number, for the pairs.
    const byRound = new Map<number, Partial<Record<ServerKind, number>>>();
    const heapRounds: Partial<Record<ServerKind, number[]>> = {};
    for (const r of group) {
      const heap = r.service.heapBytesPerEvent;
      if (typeof heap === 'number' && heap > 0) (heapRounds[r.server] ??= []).push(heap);
      const v = usPerDelivery(r);
      if (v === undefined) continue;
      (rounds[r.server] ??= []).push(round2(v));
      const round = Number(r.extra?.round);
      if (Number.isFinite(round)) byRound.set(round, { ...byRound.get(round), [r.server]: v });
    }
    const medians: Partial<Record<ServerKind, number>> = {};
    for (const [server, values] of Object.entries(rounds) as [ServerKind, number[]][]) {
      medians[server] = round2(median(values));
    }
    const ratio = (a?: number, b?: number): number | undefined =>
      a !== undefined && b !== undefined && b > 0 ? round2(a / b) : undefined;
    const perRound = pairedRatios(byRound, 'nest', 'bare');
    const pairedMedian = (ratios: number[]): number | undefined =>
      ratios.length > 0 ? round2(median(ratios)) : undefined;
    const heapBytes: Partial<Record<ServerKind, number>> = {};
    for (const [server, values] of Object.entries(heapRounds) as [ServerKind, number[]][]) {
      heapBytes[server] = Math.round(median(values));
    }
    out.push({
      scenario: first.scenario,
      transport: first.transport,
      orders: first.scenario === 'broadcast' ? Number(first.extra?.orders) : undefined,
      subscribers: first.settings.subscribers,
      rounds,
      medians,
      overBare: ratio(medians.nest, medians.bare),
      overNchan: ratio(medians.nest, medians.nchan),
      overBarePerRound: perRound,
      overBarePaired: pairedMedian(perRound),
      overFloorPaired: pairedMedian(pairedRatios(byRound, 'nest', 'floor')),
      floorOverBarePaired: pairedMedian(pairedRatios(byRound, 'floor', 'bare')),
      fastifyOverBarePaired: pairedMedian(pairedRatios(byRound, 'fastify', 'bare')),
      floorOverFastifyPaired: pairedMedian(pairedRatios(byRound, 'floor', 'fastify')),
      heapBytes,
      heapOverBare: ratio(heapBytes.nest, heapBytes.bare),
      target: OVER_BARE_TARGETS[first.transport],
      saturated: group.filter((r) => r.generator.saturated).length,
      busy: group.filter((r) => r.host?.busy).length,
      runs: group.length,
    });
  }
  return out;
}

/** Server `a` over server `b` in each round where both have a figure, in round order. */
function pairedRatios(
  byRound: ReadonlyMap<number, Partial<Record<ServerKind, number>>>,
  a: ServerKind,
  b: ServerKind,
): number[] {
  return [...byRound.entries()]
    .sort(([x], [y]) => x - y)
    .flatMap(([, s]) => {
      const over = s[a];
      const under = s[b];
      return over !== undefined && under ? [round2(over / under)] : [];
    });
}

const fmt = (values: number[] | undefined): string =>
  values === undefined ? '-' : values.map(String).join(' / ');

const paired = (c: ServerComparison): string =>
  c.overBarePaired === undefined
    ? '-'
    : `${c.overBarePaired} (${c.overBarePerRound.map(String).join(' / ')})`;

const heap = (c: ServerComparison): string =>
  c.heapBytes.nest === undefined && c.heapBytes.bare === undefined
    ? '-'
    : `${c.heapBytes.nest ?? '-'} / ${c.heapBytes.bare ?? '-'}` +
      (c.heapOverBare !== undefined ? ` (${c.heapOverBare})` : '') +
      (c.heapBytes.fastify !== undefined ? `; fastify ${c.heapBytes.fastify}` : '') +
      (c.heapBytes.floor !== undefined ? `; nest floor ${c.heapBytes.floor}` : '');

/** Fastify / bare, Nest floor / Fastify, service / Nest floor; Nest floor / bare ('-': none). */
const floors = (c: ServerComparison): string => {
  const chain = [c.fastifyOverBarePaired, c.floorOverFastifyPaired, c.overFloorPaired];
  if (chain.every((v) => v === undefined) && c.floorOverBarePaired === undefined) return '-';
  const show = (v: number | undefined): string => (v === undefined ? '-' : String(v));
  return `${chain.map(show).join(', ')}; ${show(c.floorOverBarePaired)}`;
};

/** Markdown: one row per group, the rounds and medians of each server, the ratios. */
export function comparisonTable(rows: readonly ServerComparison[]): string[] {
  if (rows.length === 0) return [];
  return [
    '| scenario | transport | subs | orders | service µs/delivery (rounds) | bare Node | Fastify floor | Nest floor | Nchan | service / bare (medians) | service / bare per round: median (rounds) | target | per round: Fastify / bare, Nest floor / Fastify, service / Nest floor; Nest floor / bare | service / Nchan | heap bytes / delivery: service / bare (ratio); floors | generator saturated / host busy |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (c) =>
        `| ${c.scenario} | ${c.transport} | ${c.subscribers} | ${c.orders ?? '1 each'} | ` +
        `${fmt(c.rounds.nest)} | ${fmt(c.rounds.bare)} | ${fmt(c.rounds.fastify)} | ${fmt(c.rounds.floor)} | ${fmt(c.rounds.nchan)} | ` +
        `${c.overBare ?? '-'} | ${paired(c)} | ${c.target !== undefined ? `<= ${c.target}` : '-'} | ${floors(c)} | ${c.overNchan ?? '-'} | ${heap(c)} | ` +
        `${c.saturated} / ${c.busy} of ${c.runs} |`,
    ),
    '',
  ];
}
