import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SCENARIOS } from '../scenarios/registry';
import { markdownReport } from './markdown';
import { REPO_ROOT } from './portable-path';
import type { Report } from './report-data';
import { costSources, costTable, summaryMarkdown, type ReferenceRun } from './summary';

/** Where the reference runs live: one folder per scenario, and the summary beside them. */
export const RESULTS_DIR = join(REPO_ROOT, 'loadtest/results');
/** The load test's README, whose cost table is the summary's. */
export const LOADTEST_README = join(REPO_ROOT, 'loadtest/README.md');
const BLOCK_START = '<!-- summary:start (npm run loadtest -- summary) -->';
const BLOCK_END = '<!-- summary:end -->';

/** The run's report cut into one report per scenario it ran (the suite runs several). */
export function byScenario(report: Report): Map<string, Report> {
  const out = new Map<string, Report>();
  for (const scenario of new Set(report.runs.map((r) => r.scenario))) {
    out.set(scenario, {
      ...report,
      settings: { ...report.settings, scenarios: [scenario] },
      runs: report.runs.filter((r) => r.scenario === scenario),
    });
  }
  return out;
}

/** Every stored reference run, in the registry's order of scenarios (others after, by name). */
export function readReferences(dir: string = RESULTS_DIR): ReferenceRun[] {
  const rank = (name: string): number => {
    const i = SCENARIOS.findIndex((s) => s.name === name);
    return i === -1 ? SCENARIOS.length : i;
  };
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'results.json')))
    .map((d) => d.name)
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
    .map((folder) => ({
      folder,
      report: JSON.parse(readFileSync(join(dir, folder, 'results.json'), 'utf8')) as Report,
    }));
}

/** The load test's README with its summary block replaced by the current cost table. */
export function withSummaryBlock(readme: string, refs: readonly ReferenceRun[]): string {
  const start = readme.indexOf(BLOCK_START);
  const end = readme.indexOf(BLOCK_END);
  if (start === -1 || end < start)
    throw new Error(`${LOADTEST_README} has no ${BLOCK_START} ... ${BLOCK_END} block`);
  const block = [BLOCK_START, '', ...costTable(refs), '', costSources(refs), '', BLOCK_END];
  return readme.slice(0, start) + block.join('\n') + readme.slice(end + BLOCK_END.length);
}

/**
 * Formatted as `npm run format` would, so the generated files and prettier agree (its CLI:
 * the API loads its plugins through dynamic imports, which Jest's CommonJS cannot run).
 */
async function formatted(path: string, markdown: string): Promise<string> {
  const cli = require.resolve('prettier/bin/prettier.cjs');
  const child = promisify(execFile)(process.execPath, [cli, '--stdin-filepath', path], {
    cwd: REPO_ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  child.child.stdin?.end(markdown);
  return (await child).stdout;
}

/** The summary files as the stored runs make them: path -> content. */
export async function summaryFiles(
  dir: string = RESULTS_DIR,
  readmePath: string = LOADTEST_README,
): Promise<Map<string, string>> {
  const refs = readReferences(dir);
  const summary = join(dir, 'README.md');
  return new Map([
    [summary, await formatted(summary, summaryMarkdown(refs))],
    [
      readmePath,
      await formatted(readmePath, withSummaryBlock(readFileSync(readmePath, 'utf8'), refs)),
    ],
  ]);
}

export async function writeSummary(
  dir: string = RESULTS_DIR,
  readmePath: string = LOADTEST_README,
): Promise<string[]> {
  const files = await summaryFiles(dir, readmePath);
  for (const [path, content] of files) writeFileSync(path, content);
  return [...files.keys()];
}

/**
 * Stores a run as the reference of each scenario it ran (results.json and report.md,
 * replacing the previous ones) and regenerates the summary.
 */
export async function writeReference(
  report: Report,
  dir: string = RESULTS_DIR,
  readmePath: string = LOADTEST_README,
): Promise<string[]> {
  const written: string[] = [];
  for (const [scenario, part] of byScenario(report)) {
    const folder = join(dir, scenario);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'results.json'), `${JSON.stringify(part, null, 2)}\n`);
    writeFileSync(join(folder, 'report.md'), markdownReport(part));
    written.push(folder);
  }
  await writeSummary(dir, readmePath);
  return written;
}
