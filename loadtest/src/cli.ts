import { accessSync, constants, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { isTransportName, TRANSPORTS, type TransportName } from './clients/transport';
import { htmlReport } from './report/html';
import { markdownReport } from './report/markdown';
import { writeReference, writeSummary } from './report/reference';
import { consoleTable } from './report/table';
import { LADDER_RUNGS } from './ladder/rungs';
import { SCENARIOS } from './scenarios/registry';
import type { ScenarioOptions } from './scenarios/scenario';
import { DEFAULT_SUITE, runSuite, suiteExitCode, type SuiteStep } from './suite';

const USAGE = `usage: npm run loadtest -- [scenario|all] [--transports ${TRANSPORTS.join(',')}]
  [--subscribers N] [--rate EVENTS_PER_S_PER_ORDER] [--duration S] [--warmup S]
  [--payload BYTES] [--target URL] [--token T] [--grpc-shared] [--tiny] [--out DIR] [--server nest|bare]
  [--cpu-prof DIR] [--orders K1,K2,...] [--rounds N] [--node PATH] [--node-flag=--FLAG ...]
  [--read-batch-ms MS] [--rungs ID1,ID2,...] [--reference]
       npm run loadtest -- summary   (regenerate loadtest/results/README.md from the stored runs)
scenarios: ${SCENARIOS.map((s) => s.name).join(', ')} (no scenario: the default suite)`;

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Validates before defaults are merged, and returns every problem at once. */
export function parseCli(argv: readonly string[]):
  | {
      steps: SuiteStep[];
      overrides: Partial<ScenarioOptions>;
      transports: TransportName[];
      target?: string;
      token?: string;
      tiny: boolean;
      out?: string;
      reference: boolean;
      server: 'nest' | 'bare';
      cpuProfDir?: string;
      node?: string;
      nodeFlags?: string[];
    }
  | { errors: string[] } {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      transports: { type: 'string' },
      subscribers: { type: 'string' },
      rate: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      payload: { type: 'string' },
      target: { type: 'string' },
      token: { type: 'string' },
      out: { type: 'string' },
      'grpc-shared': { type: 'boolean' },
      'cpu-prof': { type: 'string' },
      orders: { type: 'string' },
      rounds: { type: 'string' },
      'read-batch-ms': { type: 'string' },
      rungs: { type: 'string' },
      node: { type: 'string' },
      'node-flag': { type: 'string', multiple: true },
      tiny: { type: 'boolean' },
      reference: { type: 'boolean' },
      server: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const errors: string[] = [];
  if (values.help) return { errors: [USAGE] };
  const num = (
    name: string,
    v: string | undefined,
    min: number,
    max: number,
  ): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n) || n < min || n > max)
      errors.push(`--${name} must be a number in [${min}, ${max}], got ${v}`);
    return n;
  };
  const overrides: { -readonly [K in keyof ScenarioOptions]?: ScenarioOptions[K] } = {
    subscribers: num('subscribers', values.subscribers, 1, 50_000),
    rate: num('rate', values.rate, 0.1, 10_000),
    durationS: num('duration', values.duration, 1, 3_600),
    warmupS: num('warmup', values.warmup, 0, 600),
    payloadBytes: num('payload', values.payload, 0, 1_048_576),
    rounds: num('rounds', values.rounds, 1, 20),
    readBatchMs: num('read-batch-ms', values['read-batch-ms'], 0, 10_000),
  };
  const batchMs = overrides.readBatchMs;
  if (batchMs !== undefined && batchMs !== 0 && (!Number.isInteger(batchMs) || batchMs < 10))
    errors.push(`--read-batch-ms must be 0 or a whole number from 10, got ${batchMs}`);
  if (values.orders !== undefined) {
    const orders = values.orders.split(',').map((k) => Number(k.trim()));
    if (orders.some((k) => !Number.isInteger(k) || k < 1 || k > 50_000))
      errors.push(`--orders must be integers in [1, 50000], got ${values.orders}`);
    else overrides.orders = orders;
  }
  // The ladder's rungs by id (e.g. metrics,tracing-100): a layer priced against the one
  // below it without running the whole ladder.
  if (values.rungs !== undefined) {
    const ids = values.rungs.split(',').map((id) => id.trim());
    const known = LADDER_RUNGS.map((r) => r.id);
    const bad = ids.filter((id) => !known.includes(id));
    if (bad.length > 0)
      errors.push(`unknown rung(s) ${bad.join(', ')}; known: ${known.join(', ')}`);
    else overrides.rungs = ids;
  }
  if (values['grpc-shared']) overrides.grpcSharedChannel = true;
  let transports: TransportName[] = [...TRANSPORTS];
  if (values.transports !== undefined) {
    const list = values.transports.split(',').map((t) => t.trim());
    const bad = list.filter((t) => !isTransportName(t));
    if (bad.length > 0)
      errors.push(`unknown transport(s) ${bad.join(', ')}; known: ${TRANSPORTS.join(', ')}`);
    transports = list.filter(isTransportName);
    overrides.transports = transports;
  }
  for (const k of Object.keys(overrides) as (keyof typeof overrides)[])
    if (overrides[k] === undefined) delete overrides[k];
  if (positionals.length > 1) errors.push(`one scenario at a time, got ${positionals.join(' ')}`);
  const name = positionals[0];
  let steps: SuiteStep[] = [...DEFAULT_SUITE];
  if (name !== undefined && name !== 'all') {
    if (!SCENARIOS.some((s) => s.name === name)) errors.push(`unknown scenario ${name}\n${USAGE}`);
    steps = [{ scenario: name, options: {} }];
  }
  // The ladder prices its layers at one fan-out per run: a list would mix them in its table.
  if (name === 'ladder' && (overrides.orders?.length ?? 0) > 1)
    errors.push(
      `the ladder takes one --orders (its subscribers share K orders), got ${values.orders}`,
    );
  if (values.target !== undefined) {
    try {
      new URL(values.target);
    } catch {
      errors.push(`--target must be a URL, got ${values.target}`);
    }
  }
  if (values.server !== undefined && values.server !== 'nest' && values.server !== 'bare') {
    errors.push(`--server must be nest or bare, got ${values.server}`);
  }
  // The service's Node binary (compare Node versions on one build); checked here so a
  // typo fails before the first run instead of as a start-up failure of every run.
  if (values.node !== undefined && !isExecutable(values.node)) {
    errors.push(`--node must be an executable file, got ${values.node}`);
  }
  // Node or V8 flags for every server the suite starts (a V8 tuning measured against the
  // same build): one flag per --node-flag, a flag and nothing else.
  const nodeFlags = values['node-flag'] ?? [];
  for (const f of nodeFlags) {
    if (!/^--[A-Za-z0-9][A-Za-z0-9_-]*(=[^\s]+)?$/.test(f))
      errors.push(`--node-flag takes one flag such as --max-semi-space-size=64, got ${f}`);
  }
  // A reference run replaces what the summary reports, so it is a full-size run of the service.
  if (values.reference && (values.tiny || values.target !== undefined))
    errors.push('--reference takes neither --tiny nor --target: a reference run is full size');
  if (errors.length > 0) return { errors };
  return {
    steps,
    overrides,
    transports,
    target: values.target,
    token: values.token,
    tiny: values.tiny ?? false,
    out: values.out,
    reference: values.reference ?? false,
    server: values.server === 'bare' ? 'bare' : 'nest',
    ...(values['cpu-prof'] === undefined ? {} : { cpuProfDir: resolve(values['cpu-prof']) }),
    ...(values.node === undefined ? {} : { node: resolve(values.node) }),
    ...(nodeFlags.length === 0 ? {} : { nodeFlags }),
  };
}

/** Writes results.json, report.md and report.html into `dir`. */
export function writeOutputs(dir: string, report: Awaited<ReturnType<typeof runSuite>>): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'results.json'), JSON.stringify(report, null, 2));
  writeFileSync(join(dir, 'report.md'), markdownReport(report));
  writeFileSync(join(dir, 'report.html'), htmlReport(report));
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv[0] === 'summary' && argv.length === 1) {
    const files = await writeSummary();
    process.stdout.write(`${files.map((f) => relative(process.cwd(), f)).join('\n')}\n`);
    return 0;
  }
  const parsed = parseCli(argv);
  if ('errors' in parsed) {
    process.stderr.write(`${parsed.errors.join('\n')}\n`);
    return 2;
  }
  // Ctrl-C: the launcher kills every service it started, then exits.
  const tty = process.stderr.isTTY;
  const report = await runSuite({
    ...parsed,
    argv,
    progress: (line, final) => {
      if (tty) process.stderr.write(`\r\x1b[K${line}${final ? '\n' : ''}`);
      else if (final) process.stderr.write(`${line}\n`);
    },
  });
  const dir = resolve(
    parsed.out ?? join(__dirname, '../out', report.startedAt.replace(/[:.]/g, '-')),
  );
  writeOutputs(dir, report);
  process.stdout.write(
    `\n${consoleTable(report.runs)}\n\nresults: ${dir}/results.json, report.md, report.html\n`,
  );
  if (parsed.reference) {
    const folders = await writeReference(report);
    process.stdout.write(
      `reference runs: ${folders.map((f) => relative(process.cwd(), f)).join(', ')}\n`,
    );
  }
  return suiteExitCode(report);
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
