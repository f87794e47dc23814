import type { RunResult } from '../scenarios/result';
import { ARTICLE_FIGURES } from './articles';
import { comparisonTable, serverComparisons } from './comparison';
import type { Report } from './report-data';
import { ladderLines } from './ladder-table';
import { soakSection } from './soak-section';
import { markdownTable } from './table';
import { targetChecks } from './targets';

/** Says which runs' unsampled subscribers read in batches (ReadBatcher), and how often. */
export function readBatchNote(runs: readonly RunResult[]): string[] {
  const batched = runs.filter((r) => r.settings.readBatchMs !== undefined);
  if (batched.length === 0) return [];
  const periods = [...new Set(batched.map((r) => r.settings.readBatchMs))].join(' / ');
  const transports = [...new Set(batched.map((r) => r.transport))];
  // gRPC reads in batches only through the raw client (RawGrpcConnector).
  const raw = transports.includes('grpc')
    ? " gRPC's unsampled subscribers speak HTTP/2 through the load test's raw client " +
      '(frames written and read by hand) rather than grpc-js; the requests are the same.'
    : '';
  return [
    `Batched reads (${transports.join(', ')}): the subscribers whose latency was not sampled ` +
      `read their sockets once every ${periods} ms; the server's writes are the same ` +
      `(docs/loadtest-method.md, "Batched reads").${raw}`,
    '',
  ];
}

/** The line under a table whose HTTP/2 runs read their unsampled subscribers through the raw client. */
export function rawHttp2Note(runs: readonly RunResult[]): string[] {
  const raw = [
    ...new Set(runs.filter((r) => r.settings.rawHttp2 === true).map((r) => r.transport)),
  ];
  if (raw.length === 0) return [];
  return [
    `Raw HTTP/2 client (${raw.join(', ')}): the subscribers whose latency was not sampled ` +
      "read through the load test's raw client (HTTP/2 frames written and read by hand on " +
      'TLS) rather than `node:http2`; the sampled ones, and every request the server sees, ' +
      'are the same (docs/loadtest-method.md, "Batched reads").',
    '',
  ];
}

/** The line under a table whose gRPC runs read their unsampled subscribers below grpc-js. */
export function leanGrpcNote(runs: readonly RunResult[]): string[] {
  const lean = runs.filter((r) => r.settings.leanGrpc === true);
  if (lean.length === 0) return [];
  const raw = lean.some((r) => r.settings.rawGrpc === true);
  const how = raw
    ? "the load test's raw client (HTTP/2 frames written and read by hand on a TCP socket)"
    : '`node:http2` with gRPC framing';
  return [
    `${raw ? 'Raw' : 'Lean'} gRPC client: the gRPC subscribers whose latency was not sampled ` +
      `read through ${how} rather than grpc-js; the sampled ones, and every request the ` +
      'server sees, are the same (docs/loadtest-method.md, "Batched reads").',
    '',
  ];
}

/** The Markdown report: setup, one table per scenario, the articles' figures beside ours. */
export function markdownReport(report: Report): string {
  const m = report.machine;
  const out: string[] = [
    '# Order-status load test',
    '',
    `Run ${report.startedAt} -> ${report.finishedAt} on ${m.cpuModel}, ${m.cores} cores, ${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB, ${m.platform} ${m.kernel}.`,
    `Node ${report.versions.node}${report.settings.serviceNode ? ` (service: Node ${report.settings.serviceNode.version})` : ''}${report.settings.serviceNodeFlags ? `, servers started with ${report.settings.serviceNodeFlags.map((f) => `\`${f}\``).join(' ')}` : ''}, commit ${report.versions.commit}. Service and generator ${report.settings.pinned ? 'pinned to separate cores (taskset)' : 'not pinned (single core or --target)'}.${report.settings.processPerTransport ? ' Each transport ran in a fresh generator process.' : ''}`,
    `Command: \`loadtest ${report.settings.argv.join(' ')}\``,
    ...hostLines(report),
    ...(report.aborted ?? []).map(
      (a) => `**aborted: ${a.scenario}** (no runs): ${a.error.replace(/\s+/g, ' ')}`,
    ),
    '',
    'Latency is publish-to-receive (service clock `publishedAtUs` vs the client clock, same host). ' +
      'CPU and RSS are the service process from /proc; CPU ms/1k ev is service CPU time per 1,000 delivered events. ' +
      'A row marked "generator saturated" measured the load generator, not the service.',
    '',
  ];
  const scenarios = [...new Set(report.runs.map((r) => r.scenario))];
  for (const s of scenarios) {
    const runs = report.runs.filter((r) => r.scenario === s);
    out.push(`## ${s}`, '', markdownTable(runs), '');
    out.push(...readBatchNote(runs));
    out.push(...leanGrpcNote(runs));
    out.push(...rawHttp2Note(runs));
    out.push(...extraTable(runs));
    out.push(...soakSection(runs));
    const ladder = ladderLines(runs);
    if (ladder.length > 0) {
      out.push(
        'The ladder: medians of the rounds; "marginal" is what a rung adds to the one below it, the median of the differences within a round.',
        '',
        ...ladder,
        '',
      );
    }
    for (const a of ARTICLE_FIGURES.filter((f) => f.scenario === s)) {
      out.push(
        `**Beside ${a.source}.** Their setup: ${a.setup}`,
        '',
        '| their figure | value |',
        '|---|---|',
      );
      for (const [k, v] of a.figures) out.push(`| ${k} | ${v} |`);
      out.push('');
    }
  }
  const compared = comparisonTable(serverComparisons(report.runs));
  if (compared.length > 0) {
    out.push(
      '## Service, bare Node and Nchan',
      '',
      'Server CPU µs per delivery (CPU ms per 1,000 delivered events), each round, medians compared.',
      '',
      ...compared,
    );
  }
  const checks = targetChecks(report.runs);
  if (checks.length > 0) {
    out.push(
      '## Targets of the issue',
      '',
      '| target | required | measured | reached |',
      '|---|---|---|---|',
    );
    for (const c of checks)
      out.push(`| ${c.target} | ${c.required} | ${c.measured} | ${c.reached ? 'yes' : 'no'} |`);
    out.push('');
  }
  return out.join('\n');
}

/** How much of the host other processes took: a shared host skews CPU and tail latency. */
function hostLines(report: Report): string[] {
  const withHost = report.runs.filter((r) => r.host !== undefined);
  if (withHost.length === 0) return [];
  const busy = withHost.filter((r) => r.host?.busy).length;
  const other = withHost.reduce((a, r) => a + (r.host?.otherCpuPctAvg ?? 0), 0) / withHost.length;
  const load = report.machine.loadAverage?.join(' / ') ?? '?';
  return [
    `Host: load average ${load} (1/5/15 min) at start; other processes took ${other.toFixed(0)} % of a core on average during the runs; ${busy} of ${withHost.length} runs flagged "host busy" (others >= 20 % of a core).`,
  ];
}

/** Scenario-specific figures (extra) as their own table, one row per run. */
function extraTable(runs: readonly RunResult[]): string[] {
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r.extra ?? {})))];
  if (keys.length === 0) return [];
  return [
    `| transport | variant | ${keys.join(' | ')} |`,
    `|---|---|${keys.map(() => '---').join('|')}|`,
    ...runs.map(
      (r) =>
        `| ${r.transport} | ${r.variant || '-'} | ${keys.map((k) => String(r.extra?.[k] ?? '-')).join(' | ')} |`,
    ),
    '',
  ];
}
