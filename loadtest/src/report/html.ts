import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { RunResult } from '../scenarios/result';
import { ARTICLE_FIGURES } from './articles';
import { ladderChart, ladderLines } from './ladder-table';
import type { Report } from './report-data';
import { COLUMNS, rows } from './table';
import { targetChecks } from './targets';

/** chart.js's UMD build, inlined so the report opens offline (no CDN). */
function chartJsSource(): string {
  // chart.js's exports map hides dist/chart.umd.js; its main entry sits in the same folder.
  return readFileSync(join(dirname(require.resolve('chart.js')), 'chart.umd.js'), 'utf8');
}

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function table(runs: readonly RunResult[]): string {
  const head = COLUMNS.map((c) => `<th>${esc(c.title)}</th>`).join('');
  const body = rows(runs)
    .map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`)
    .join('\n');
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** Chart specs computed here; the page only hands them to chart.js. */
function charts(runs: readonly RunResult[]): { id: string; title: string; config: unknown }[] {
  const out: { id: string; title: string; config: unknown }[] = [];
  const steady = runs.filter((r) => r.scenario === 'steady');
  if (steady.length > 0) {
    out.push({
      id: 'latency',
      title: 'steady: publish-to-receive latency percentiles (ms, log scale)',
      config: {
        type: 'bar',
        data: {
          labels: steady.map((r) => r.transport),
          datasets: (['p50Ms', 'p90Ms', 'p99Ms', 'p999Ms'] as const).map((k) => ({
            label: k.replace('Ms', '').replace('p999', 'p99.9'),
            data: steady.map((r) => Math.max(r.latency[k], 0.01)),
          })),
        },
        options: { scales: { y: { type: 'logarithmic', title: { display: true, text: 'ms' } } } },
      },
    });
    for (const [id, title, pick] of [
      ['cpu', 'steady: service CPU % over time', (s: { cpuPct: number }) => s.cpuPct],
      [
        'rss',
        'steady: service RSS (MB) over time',
        (s: { rssBytes: number }) => s.rssBytes / 1048576,
      ],
    ] as const) {
      out.push({
        id,
        title,
        config: {
          type: 'line',
          data: {
            datasets: steady.map((r) => ({
              label: r.transport,
              data: r.service.samples.map((s) => ({
                x: s.tMs / 1000,
                y: Math.round(pick(s as never) * 10) / 10,
              })),
              pointRadius: 0,
            })),
          },
          options: { scales: { x: { type: 'linear', title: { display: true, text: 's' } } } },
        },
      });
    }
  }
  const bytes = runs.filter((r) => r.scenario === 'bytes' && r.wire);
  if (bytes.length > 0) {
    const transports = [...new Set(bytes.map((r) => r.transport))];
    out.push({
      id: 'bytes',
      title: 'bytes: wire bytes per event (both directions, handshakes included)',
      config: {
        type: 'bar',
        data: {
          labels: transports,
          datasets: ['bare headers', 'browser headers'].map((v) => ({
            label: v,
            data: transports.map(
              (t) => bytes.find((r) => r.transport === t && r.variant === v)?.wire?.perEvent ?? 0,
            ),
          })),
        },
      },
    });
  }
  out.push(...ladderChart(runs));
  return out;
}

/** A Markdown table (ladderLines) as HTML. */
function markdownToHtml(lines: readonly string[]): string {
  const cells = (l: string): string[] =>
    l
      .slice(1, -1)
      .split(' | ')
      .map((c) => c.trim());
  const [head, , ...body] = lines;
  if (head === undefined) return '';
  return `<table><thead><tr>${cells(head)
    .map((c) => `<th>${esc(c)}</th>`)
    .join('')}</tr></thead><tbody>${body
    .map(
      (l) =>
        `<tr>${cells(l)
          .map((c) => `<td>${esc(c)}</td>`)
          .join('')}</tr>`,
    )
    .join('\n')}</tbody></table>`;
}

/** A self-contained HTML report: tables, charts (chart.js inline), the articles' figures. */
export function htmlReport(report: Report): string {
  const scenarios = [...new Set(report.runs.map((r) => r.scenario))];
  const specs = charts(report.runs);
  const sections = scenarios
    .map((s) => {
      const articles = ARTICLE_FIGURES.filter((a) => a.scenario === s)
        .map(
          (a) =>
            `<p><b>Beside ${esc(a.source)}.</b> ${esc(a.setup)}</p><table>${a.figures
              .map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`)
              .join('')}</table>`,
        )
        .join('');
      const runs = report.runs.filter((r) => r.scenario === s);
      return `<h2>${esc(s)}</h2>${table(runs)}${markdownToHtml(ladderLines(runs))}${articles}`;
    })
    .join('\n');
  const checks = targetChecks(report.runs);
  const targets =
    checks.length === 0
      ? ''
      : `<h2>Targets</h2><table><tr><th>target</th><th>required</th><th>measured</th><th>reached</th></tr>${checks
          .map(
            (c) =>
              `<tr><td>${esc(c.target)}</td><td>${esc(c.required)}</td><td>${esc(c.measured)}</td><td>${c.reached ? 'yes' : 'no'}</td></tr>`,
          )
          .join('')}</table>`;
  const m = report.machine;
  // JSON in a <script> must not be able to close the tag.
  const data = JSON.stringify(specs).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Order-status load test</title>
<style>
body{font:14px system-ui,sans-serif;margin:2em;max-width:1400px}
table{border-collapse:collapse;margin:1em 0;font-size:12px}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f3f3f3}
.chart{max-width:900px;margin:2em 0}
</style>
<script>${chartJsSource()}</script>
</head><body>
<h1>Order-status load test</h1>
<p>${esc(report.startedAt)} on ${esc(m.cpuModel)}, ${m.cores} cores, Node ${esc(report.versions.node)}, commit ${esc(report.versions.commit)}.
Service and generator ${report.settings.pinned ? 'pinned to separate cores' : 'not pinned'}.</p>
${specs.map((c) => `<div class="chart"><h3>${esc(c.title)}</h3><canvas id="${c.id}"></canvas></div>`).join('\n')}
${sections}
${targets}
<script>
for (const c of ${data}) new Chart(document.getElementById(c.id), c.config);
</script>
</body></html>
`;
}
