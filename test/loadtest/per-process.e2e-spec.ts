import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Report } from '../../loadtest/src/report/report-data';
import { isClean } from '../../loadtest/src/scenarios/scale';
import { SERVICE_ENTRY } from '../../loadtest/src/service/launcher';

const ROOT = join(__dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const CLI = join(ROOT, 'loadtest', 'src', 'cli.ts');
const PROBE = join(__dirname, 'fixtures', 'note-cli-process.cjs');

interface CliProcess {
  readonly pid: number;
  readonly args: string[];
}

/**
 * `loadtest scale` with two transports, as a user runs it: each transport's climb runs
 * in a fresh generator process (a probe preloaded into every process notes which ran
 * the CLI and with what), and the one report holds both climbs.
 */
describe('loadtest scale, one generator process per transport', () => {
  jest.setTimeout(120_000);
  let dir: string;

  beforeAll(() => {
    if (!existsSync(SERVICE_ENTRY)) {
      throw new Error(`${SERVICE_ENTRY} is missing: run \`npm run build\` first`);
    }
    dir = mkdtempSync(join(tmpdir(), 'per-process-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs each transport in its own process and merges their runs', async () => {
    const notes = join(dir, 'processes.jsonl');
    const out = join(dir, 'out');
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [TSX, CLI, 'scale', '--tiny', '--transports', 'sse,ws', '--out', out],
        {
          cwd: ROOT,
          env: {
            ...process.env,
            NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require "${PROBE}"`,
            NOTE_CLI_PROCESS_FILE: notes,
          },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      child.stderr.resume();
      child.once('error', reject);
      child.once('exit', resolve);
    });
    expect(code).toBe(0);

    const processes = readFileSync(notes, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as CliProcess);
    const transportsOf = (p: CliProcess) => p.args[p.args.indexOf('--transports') + 1];
    expect(processes.map(transportsOf)).toEqual(['sse,ws', 'sse', 'ws']);
    expect(new Set(processes.map((p) => p.pid)).size).toBe(3);
    // The children keep the rest of the command line and write where they are told.
    for (const child of processes.slice(1)) {
      expect(child.args).toContain('--tiny');
      expect(child.args[child.args.indexOf('--out') + 1]).not.toBe(out);
    }

    const report = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as Report;
    expect(report.settings.processPerTransport).toBe(true);
    // Both climbs, in order, every step each child ran. A climb stops after its first step
    // past the bound (on a loaded CI host even 2 subscribers' p99 can pass 50 ms), so a
    // transport's steps are 2 and 4, or 2 alone when that step was not clean.
    expect([...new Set(report.runs.map((r) => r.transport))]).toEqual(['sse', 'ws']);
    for (const transport of ['sse', 'ws']) {
      const runs = report.runs.filter((r) => r.transport === transport);
      const steps = isClean(runs[0]) ? ['2 subs', '4 subs'] : ['2 subs'];
      expect(runs.map((r) => r.variant)).toEqual(steps);
    }
    expect(report.runs.every((r) => r.ok && r.events.lost === 0)).toBe(true);
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain(
      'Each transport ran in a fresh generator process.',
    );
  });
});
