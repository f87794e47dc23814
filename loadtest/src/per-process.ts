import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AbortedScenario, Report } from './report/report-data';
import type { RunResult } from './scenarios/result';

/** The CLI entry a child runs (this tree is run by tsx, from source). */
const CLI = join(__dirname, 'cli.ts');

/**
 * The CLI arguments of one transport's share of a run: every flag as given, with
 * `--transports` and `--out` replaced (both forms, `--x v` and `--x=v`).
 */
export function argvForTransport(
  argv: readonly string[],
  transport: string,
  out: string,
): string[] {
  const kept: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--transports' || arg === '--out') {
      i++;
      continue;
    }
    if (arg.startsWith('--transports=') || arg.startsWith('--out=')) continue;
    kept.push(arg);
  }
  return [...kept, '--transports', transport, '--out', out];
}

/**
 * Runs the CLI once per transport, each in a fresh generator process, and returns their
 * runs in transport order. The process that measures latency must not carry what an
 * earlier climb to thousands of connections left in it: long-poll over HTTP/2 failed its
 * 250-subscriber step after the other climbs (p99 74-186 ms) and passed alone (17-27 ms).
 * The child inherits the generator's pinned core; its progress goes to our stderr.
 * `aborted` is checked between transports (Ctrl-C reaches the children itself).
 */
export async function runPerProcess(
  argv: readonly string[],
  transports: readonly string[],
  aborted: () => boolean,
): Promise<Pick<Report, 'runs' | 'aborted'>> {
  const runs: RunResult[] = [];
  const failed: AbortedScenario[] = [];
  for (const transport of transports) {
    if (aborted()) break;
    const out = mkdtempSync(join(tmpdir(), `loadtest-${transport}-`));
    try {
      const code = await runChild(argvForTransport(argv, transport, out));
      let report: Report;
      try {
        report = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as Report;
      } catch {
        throw new Error(`the ${transport} run exited with ${code} and wrote no results`);
      }
      runs.push(...report.runs);
      for (const a of report.aborted ?? []) {
        failed.push({ scenario: a.scenario, error: `${transport}: ${a.error}` });
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }
  return { runs, ...(failed.length > 0 ? { aborted: failed } : {}) };
}

function runChild(args: readonly string[]): Promise<number | null> {
  return new Promise((resolve, reject) => {
    // execArgv carries tsx's loader flags (and any node flags the generator was given).
    const child = spawn(process.execPath, [...process.execArgv, CLI, ...args], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  });
}
