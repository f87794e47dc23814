import type { RunResult } from '../scenarios/result';
import { serverComparisons, type ServerComparison } from './comparison';
import { ladderLines } from './ladder-table';
import type { Report } from './report-data';
import { type Column, markdownTable } from './table';

/** One stored reference run: the folder it lives in (its scenario's name) and its report. */
export interface ReferenceRun {
  readonly folder: string;
  readonly report: Report;
}

const num = (v: number | null | undefined, digits = 1): string =>
  v === null || v === undefined || !Number.isFinite(v)
    ? '-'
    : Number.isInteger(v)
      ? String(v)
      : v.toFixed(digits);
const extra = (r: RunResult, key: string): string => {
  const v = r.extra?.[key];
  return v === undefined ? '-' : typeof v === 'number' ? num(v) : String(v);
};
const col = (title: string, value: (r: RunResult) => string): Column => ({ title, value });

/** The soak's memory slopes after GC (its first run carries them for the whole run). */
const soakSlopes = (soak: RunResult['soak']): string => {
  const slope = (t: { mbPerHour: number; stdErrorMbPerHour: number } | null | undefined) =>
    t ? `${num(t.mbPerHour)} ± ${num(t.stdErrorMbPerHour)}` : '-';
  return soak ? `${slope(soak.heap)} / ${slope(soak.rss)}` : '';
};

const TRANSPORT = col('transport', (r) => r.transport);
const VARIANT = col('variant', (r) => r.variant || '-');
const SUBS = col('subs', (r) => String(r.settings.subscribers));
const P50 = col('p50 ms', (r) => num(r.latency.p50Ms, 2));
const P99 = col('p99 ms', (r) => num(r.latency.p99Ms, 2));
const LOSS = col(
  'lost/dup/ooo',
  (r) => `${r.events.lost}/${r.events.duplicates}/${r.events.outOfOrder}`,
);
const CPU = col('svc CPU %', (r) => num(r.service.cpuPctAvg));
const CPU_PER_1K = col('CPU ms/1k ev', (r) => num(r.service.cpuMsPer1kEvents));
const OK = col('ok', (r) => (r.ok ? 'yes' : `no: ${(r.error ?? '').slice(0, 60)}`));

/** A scenario without its own columns (a new one) gets these. */
const DEFAULT_COLUMNS: readonly Column[] = [VARIANT, TRANSPORT, SUBS, P50, P99, LOSS, CPU, OK];

/** The columns that carry each scenario's question. */
const HEADLINE_COLUMNS: Readonly<Record<string, readonly Column[]>> = {
  steady: [
    TRANSPORT,
    SUBS,
    P50,
    P99,
    LOSS,
    CPU,
    CPU_PER_1K,
    col('req/s', (r) => num(r.requestsPerSec)),
  ],
  idle: [
    TRANSPORT,
    col('connections', (r) => extra(r, 'connected')),
    col('RSS KB/conn', (r) =>
      extra(r, r.extra?.rssMarginalKB === undefined ? 'rssPerConnectionKB' : 'rssMarginalKB'),
    ),
    col('heap KB/conn', (r) =>
      extra(r, r.extra?.heapMarginalKB === undefined ? 'heapPerConnectionKB' : 'heapMarginalKB'),
    ),
    CPU,
  ],
  bytes: [
    VARIANT,
    TRANSPORT,
    col('B/event', (r) => num(r.wire?.perEvent)),
    col('down B/event', (r) => num(r.wire?.downPerEvent)),
    col('up bytes', (r) => num(r.wire?.up)),
  ],
  wan: [VARIANT, TRANSPORT, P50, P99, LOSS],
  'slow-consumer': [
    VARIANT,
    TRANSPORT,
    col('healthy p99 ms', (r) => num(r.latency.p99Ms)),
    col('slow: got / due', (r) => `${extra(r, 'slowReceived')} / ${extra(r, 'slowDue')}`),
    col('slow p99 ms', (r) => extra(r, 'slowP99Ms')),
  ],
  backpressure: [
    TRANSPORT,
    col('produced while paused 0.5/1/2 s', (r) => pauses(r, 'Produced')),
    col('delivered after resume', (r) => pauses(r, 'DeliveredAfterResume')),
    col('dropped by the queue', (r) => pauses(r, 'Dropped')),
  ],
  reconnect: [
    TRANSPORT,
    col('reconnects', (r) => extra(r, 'reconnects')),
    col('reconnect p50 / p99 ms', (r) => `${num(r.reconnectMs.p50)} / ${num(r.reconnectMs.p99)}`),
    LOSS,
    P99,
  ],
  unary: [VARIANT, col('total ms (500 calls)', (r) => extra(r, 'totalMs')), P50, P99],
  cluster: [
    VARIANT,
    TRANSPORT,
    P50,
    P99,
    LOSS,
    col('CPU % app1 / app2', (r) => `${extra(r, 'app1CpuPct')} / ${extra(r, 'app2CpuPct')}`),
  ],
  soak: [
    TRANSPORT,
    SUBS,
    col('delivered', (r) => String(r.events.delivered)),
    col('reconnects', (r) => extra(r, 'reconnects')),
    LOSS,
    col('heap / RSS MB/h (the run)', (r) => soakSlopes(r.soak)),
    col('verdict', (r) => (r.soak ? (r.soak.verdict.pass ? 'pass' : 'fail') : '')),
  ],
  'cluster-failover': [
    VARIANT,
    TRANSPORT,
    LOSS,
    col(
      'back after failover / kill ms',
      (r) => `${extra(r, 'failoverRecoveryMs')} / ${extra(r, 'killRecoveryMs')}`,
    ),
    col('reset subscribers (kill)', (r) => extra(r, 'killResetSubscribers')),
  ],
  routing: [
    VARIANT,
    col('ingested / needed', (r) => extra(r, 'ingestedPerNeeded')),
    col('instance CPU µs / needed event', (r) => extra(r, 'instanceCpuUsPerNeeded')),
  ],
  hostile: [VARIANT, TRANSPORT, col('canary p99 ms', (r) => num(r.latency.p99Ms)), LOSS, CPU],
};

function pauses(r: RunResult, what: string): string {
  return ['0.5s', '1s', '2s'].map((p) => extra(r, `pause${p}${what}`)).join(' / ');
}

/** Scale: per transport, the highest step that held and why the next one did not. */
function scaleLines(runs: readonly RunResult[]): string[] {
  const out = [
    '| transport | most subscribers clean (zero loss, p99 <= 50 ms) | p99 ms there | next step | which side ran out |',
    '|---|---|---|---|---|',
  ];
  for (const t of [...new Set(runs.map((r) => r.transport))]) {
    const steps = runs.filter((r) => r.transport === t && r.server === 'nest');
    const clean = steps.filter((r) => r.extra?.clean === true);
    const best = clean.at(-1);
    const next = steps.find((r) => r.extra?.clean !== true);
    out.push(
      `| ${t} | ${best?.settings.subscribers ?? 0} | ${num(best?.latency.p99Ms)} | ` +
        `${next ? `${next.settings.subscribers}: p99 ${num(next.latency.p99Ms)} ms` : '-'} | ` +
        `${next ? extra(next, 'limit') : '-'} |`,
    );
  }
  return out;
}

/** Overhead and broadcast: the service's CPU per delivery against bare Node's, medians of rounds. */
function comparisonLines(runs: readonly RunResult[]): string[] {
  const rows = serverComparisons(runs);
  if (rows.length === 0) return [];
  const us = (c: ServerComparison, k: 'nest' | 'bare' | 'nchan'): string => num(c.medians[k], 2);
  return [
    '| transport | subs | orders | service µs/delivery | bare Node | Nchan | service / bare | target |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (c) =>
        `| ${c.transport} | ${c.subscribers} | ${c.orders ?? '1 each'} | ${us(c, 'nest')} | ` +
        `${us(c, 'bare')} | ${us(c, 'nchan')} | ${c.overBarePaired ?? c.overBare ?? '-'} | ` +
        `${c.target === undefined ? '-' : `<= ${c.target}`} |`,
    ),
  ];
}

/** The headline table of one scenario's runs. */
export function headlineLines(scenario: string, runs: readonly RunResult[]): string[] {
  if (scenario === 'scale') return scaleLines(runs);
  if (scenario === 'overhead' || scenario === 'broadcast') return comparisonLines(runs);
  if (scenario === 'ladder') return ladderLines(runs);
  return markdownTable(runs, HEADLINE_COLUMNS[scenario] ?? DEFAULT_COLUMNS).split('\n');
}

export function hostLine(report: Report): string {
  const m = report.machine;
  const load = m.loadAverage ? `, load ${m.loadAverage[0]} at start` : '';
  return `${m.cpuModel}, ${m.cores} cores, ${(m.memoryBytes / 2 ** 30).toFixed(0)} GiB, ${m.platform} ${m.kernel}${load}`;
}

/** The run's wall time; a scenario cut from the default suite's run says so. */
export function runtimeText(report: Report): string {
  const s = Math.round((Date.parse(report.finishedAt) - Date.parse(report.startedAt)) / 1000);
  const first = report.settings.argv[0];
  const suite = first === undefined || first.startsWith('--') ? ' (the suite)' : '';
  return `${s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`}${suite}`;
}

function nodeText(report: Report): string {
  const service = report.settings.serviceNode?.version;
  const flags = report.settings.serviceNodeFlags?.join(' ');
  return [
    `Node ${service ?? report.versions.node}`,
    service ? ` (generator ${report.versions.node})` : '',
    flags ? `, servers with \`${flags}\`` : '',
  ].join('');
}

/** The command that made the run, without where it wrote its files (a reference run is stored here). */
export function commandText(report: Report): string {
  const argv: string[] = [];
  const given = report.settings.argv;
  for (let i = 0; i < given.length; i++) {
    if (given[i] === '--out') i++;
    else if (!given[i].startsWith('--out=')) argv.push(given[i]);
  }
  return argv.length === 0 ? 'npm run loadtest' : ['npm run loadtest --', ...argv].join(' ');
}

const first = (runs: readonly RunResult[], scenario: string, transport: string) =>
  runs.find((r) => r.scenario === scenario && r.transport === transport && r.server === 'nest');

/**
 * What every transport costs, one row each, from the steady, idle, bytes, overhead and
 * scale reference runs (a column stays '-' where its scenario has no run of the transport).
 */
export function costTable(refs: readonly ReferenceRun[]): string[] {
  const runs = refs.flatMap((r) => r.report.runs);
  const transports = [...new Set(runs.map((r) => r.transport))];
  const order = ['grpc', 'sse', 'sse-h2', 'ws', 'longpoll', 'longpoll-h2', 'shortpoll'];
  transports.sort((a, b) => order.indexOf(a) - order.indexOf(b));
  const overhead = serverComparisons(runs.filter((r) => r.scenario === 'overhead'));
  const out = [
    '| transport | steady p50 / p99 ms | CPU ms per 1k events | idle RSS KB per connection | bytes per event | service / bare Node CPU | most subscribers at 10 ev/s (scale) |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const t of transports) {
    const steady = first(runs, 'steady', t);
    const idle = first(runs, 'idle', t);
    const bytes = runs.find(
      (r) => r.scenario === 'bytes' && r.transport === t && r.variant === 'bare headers',
    );
    const over = overhead.find((c) => c.transport === t);
    const scale = runs.filter(
      (r) => r.scenario === 'scale' && r.transport === t && r.server === 'nest',
    );
    const clean = scale.filter((r) => r.extra?.clean === true).at(-1);
    out.push(
      `| ${t} | ${steady ? `${num(steady.latency.p50Ms, 2)} / ${num(steady.latency.p99Ms, 1)}` : '-'} | ` +
        `${num(steady?.service.cpuMsPer1kEvents)} | ` +
        `${idle ? extra(idle, idle.extra?.rssMarginalKB === undefined ? 'rssPerConnectionKB' : 'rssMarginalKB') : '-'} | ` +
        `${num(bytes?.wire?.perEvent)} | ${over ? String(over.overBarePaired ?? over.overBare ?? '-') : '-'} | ` +
        `${scale.length === 0 ? '-' : String(clean?.settings.subscribers ?? 0)} |`,
    );
  }
  return out;
}

/** Where each column of the cost table comes from (commit and date of its run). */
export function costSources(refs: readonly ReferenceRun[]): string {
  const from = ['steady', 'idle', 'bytes', 'overhead', 'scale']
    .map((s) => refs.find((r) => r.folder === s))
    .filter((r): r is ReferenceRun => r !== undefined)
    .map((r) => `${r.folder} ${r.report.versions.commit} (${r.report.startedAt.slice(0, 10)})`);
  return `From the reference runs ${from.join(', ')}; hosts, Node versions and commands below.`;
}

/** loadtest/results/README.md: every reference run with its command, commit, host and figures. */
export function summaryMarkdown(refs: readonly ReferenceRun[]): string {
  const out = [
    '# Load-test reference runs',
    '',
    '<!-- Generated by `npm run loadtest -- summary` from the results.json in each folder: do not edit. -->',
    '',
    'One reference run per scenario, each in the folder named after it (`results.json` and',
    '`report.md`); `npm run loadtest -- <scenario> --reference` replaces a folder and this',
    'file. Earlier runs live in git history. How to read the figures:',
    '[the load test](../README.md) and [its method](../../docs/loadtest-method.md).',
    '',
    '## What each transport costs',
    '',
    ...costTable(refs),
    '',
    costSources(refs),
    '',
    '## Runs',
    '',
    '| scenario | commit | date | runtime | Node | host |',
    '|---|---|---|---|---|---|',
    ...refs.map(
      ({ folder, report }) =>
        `| [${folder}](${folder}/report.md) | ${report.versions.commit} | ${report.startedAt.slice(0, 16).replace('T', ' ')} UTC | ` +
        `${runtimeText(report)} | ${nodeText(report)} | ${hostLine(report)} |`,
    ),
    '',
  ];
  for (const { folder, report } of refs) {
    const runs = report.runs.filter((r) => r.scenario === folder);
    out.push(
      `## ${folder}`,
      '',
      `\`${commandText(report)}\``,
      '',
      ...headlineLines(folder, runs),
      '',
    );
  }
  return `${out.join('\n').trimEnd()}\n`;
}
