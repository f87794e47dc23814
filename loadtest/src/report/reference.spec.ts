import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { portableArgv, portablePath, REPO_ROOT } from './portable-path';
import { RESULTS_DIR, summaryFiles, writeReference } from './reference';
import type { Report } from './report-data';

describe('the committed summary', () => {
  it('is what `npm run loadtest -- summary` makes of the stored reference runs', async () => {
    // A hand edit, or a reference run committed without its summary, shows up here.
    for (const [path, content] of await summaryFiles()) {
      expect([path, readFileSync(path, 'utf8')]).toEqual([path, content]);
    }
  }, 30_000);

  it('holds one folder per scenario, each with results.json and report.md only', () => {
    for (const d of readdirSync(RESULTS_DIR, { withFileTypes: true })) {
      if (!d.isDirectory()) continue;
      expect([d.name, readdirSync(join(RESULTS_DIR, d.name)).sort()]).toEqual([
        d.name,
        ['report.md', 'results.json'],
      ]);
      const report = JSON.parse(
        readFileSync(join(RESULTS_DIR, d.name, 'results.json'), 'utf8'),
      ) as Report;
      expect(new Set(report.runs.map((r) => r.scenario))).toEqual(new Set([d.name]));
    }
  });
});

describe('writeReference', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'lt-ref-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("stores each scenario of a suite run in its own folder, replacing the previous one's", async () => {
    const readme = join(dir, 'README.md');
    writeFileSync(
      readme,
      '# x\n\n<!-- summary:start (npm run loadtest -- summary) -->\nold\n<!-- summary:end -->\n',
    );
    const results = join(dir, 'results');
    const steady = JSON.parse(
      readFileSync(join(RESULTS_DIR, 'steady', 'results.json'), 'utf8'),
    ) as Report;
    const unary = JSON.parse(
      readFileSync(join(RESULTS_DIR, 'unary', 'results.json'), 'utf8'),
    ) as Report;
    const suite: Report = { ...steady, runs: [...steady.runs, ...unary.runs] };

    await writeReference(suite, results, readme);
    await writeReference({ ...unary, startedAt: '2030-01-01T00:00:00.000Z' }, results, readme);

    expect(readdirSync(results).sort()).toEqual(['README.md', 'steady', 'unary']);
    const stored = (s: string) =>
      JSON.parse(readFileSync(join(results, s, 'results.json'), 'utf8')) as Report;
    expect(stored('steady').runs.map((r) => r.scenario)).toEqual(steady.runs.map(() => 'steady'));
    expect(stored('unary').startedAt).toBe('2030-01-01T00:00:00.000Z');
    const summary = readFileSync(join(results, 'README.md'), 'utf8');
    expect(summary).toContain('2030-01-01 00:00 UTC');
    expect(readFileSync(readme, 'utf8')).not.toContain('old');
    expect(readFileSync(readme, 'utf8')).toMatch(/\| grpc +\| 1\.18 \/ 4\.2 /);
    // Each write formats through prettier's CLI (about a second a file on a busy host).
  }, 30_000);
});

describe('portable paths', () => {
  it('records paths inside the repository relative to it, and outside ones by name', () => {
    expect(portablePath(join(REPO_ROOT, 'dist/apps/order-status/main.js'))).toBe(
      'dist/apps/order-status/main.js',
    );
    expect(portablePath('/opt/node26/bin/node')).toBe('node');
    expect(portablePath('loadtest/out')).toBe('loadtest/out');
    expect(
      portableArgv([
        'scale',
        '--node',
        '/opt/n/node',
        `--cpu-prof=${REPO_ROOT}/prof`,
        '--rate',
        '5',
      ]),
    ).toEqual(['scale', '--node', 'node', '--cpu-prof=prof', '--rate', '5']);
  });
});
