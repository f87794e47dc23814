import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { markdownReport } from '../../loadtest/src/report/markdown';
import { SERVICE_ENTRY } from '../../loadtest/src/service/launcher';
import { runSuite, suiteExitCode } from '../../loadtest/src/suite';

/**
 * `--node-flag`: every server the suite starts runs with the flags (a V8 tuning measured
 * against the same build). The flags here make each server write a CPU profile at exit,
 * which only a process started with them does.
 */
describe('loadtest --node-flag', () => {
  jest.setTimeout(120_000);
  let dir: string;

  beforeAll(() => {
    if (!existsSync(SERVICE_ENTRY)) {
      throw new Error(`${SERVICE_ENTRY} is missing: run \`npm run build\` first`);
    }
  });
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'node-flags-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['nest', 'bare'] as const)('reaches the %s server and is recorded', async (server) => {
    const nodeFlags = ['--cpu-prof', `--cpu-prof-dir=${dir}`];
    const report = await runSuite({
      steps: [{ scenario: 'steady', options: {} }],
      transports: ['sse'],
      overrides: {},
      tiny: true,
      server,
      nodeFlags,
      argv: ['steady', '--tiny'],
      progress: () => undefined,
    });
    expect(report.runs.map((r) => [r.server, r.ok])).toEqual([[server, true]]);
    expect(readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))).toHaveLength(1);
    expect(report.settings.serviceNodeFlags).toEqual(nodeFlags);
    expect(markdownReport(report)).toContain(`servers started with \`--cpu-prof\``);
  });
});

/**
 * A scenario whose service cannot start ends without runs: the report names it and why,
 * and the command fails (it exited 0 with an empty report, every run of none being ok).
 */
describe('loadtest: a scenario that aborts', () => {
  jest.setTimeout(60_000);

  it('is named in the report with its error, and the command exits 1', async () => {
    const report = await runSuite({
      steps: [{ scenario: 'steady', options: {} }],
      transports: ['sse'],
      overrides: {},
      tiny: true,
      server: 'nest',
      nodeFlags: ['--no-such-node-flag'],
      argv: ['steady', '--tiny'],
      progress: () => undefined,
    });
    expect(report.runs).toEqual([]);
    expect(report.aborted).toEqual([
      { scenario: 'steady', error: expect.stringContaining('--no-such-node-flag') as string },
    ]);
    expect(suiteExitCode(report)).toBe(1);
    expect(markdownReport(report)).toMatch(
      /\*\*aborted: steady\*\* \(no runs\): .*--no-such-node-flag/,
    );
  });
});
