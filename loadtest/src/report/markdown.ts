import type { RunResult } from '../scenarios/result';
import { ARTICLE_FIGURES } from './articles';
import type { Report } from './report-data';
import { markdownTable } from './table';
import { targetChecks } from './targets';

/** The Markdown report: setup, one table per scenario, the articles' figures beside ours. */
export function markdownReport(report: Report): string {
  const m = report.machine;
  const out: string[] = [
    '# Order-status load test',
    '',
    `Run ${report.startedAt} -> ${report.finishedAt} on ${m.cpuModel}, ${m.cores} cores, ${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB, ${m.platform} ${m.kernel}.`,
    `Node ${report.versions.node}, commit ${report.versions.commit}. Service and generator ${report.settings.pinned ? 'pinned to separate cores (taskset)' : 'not pinned (single core or --target)'}.`,
    `Command: \`loadtest ${report.settings.argv.join(' ')}\``,
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
    out.push(...extraTable(runs));
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
