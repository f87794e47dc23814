import { execFileSync } from 'node:child_process';
import { TRANSPORTS, type TransportName } from './clients/transport';
import { portableArgv, portablePath } from './report/portable-path';
import {
  machineInfo,
  RESULTS_SCHEMA,
  versions,
  type AbortedScenario,
  type Report,
} from './report/report-data';
import type { RunResult } from './scenarios/result';
import type { RunContext, TransportRun } from './scenarios/run-options';
import { findScenario } from './scenarios/registry';
import type { ScenarioOptions } from './scenarios/scenario';
import { bareServerCommand } from './bare-server/bare-command';
import { fastifyFloorServerCommand, floorServerCommand } from './framework-floors/floor-command';
import { runPerProcess } from './per-process';
import { launchNchan } from './nchan/nchan-server';
import {
  launchService,
  pinGenerator,
  SERVICE_ENTRY,
  targetService,
  type RunningService,
} from './service/launcher';

export interface SuiteStep {
  readonly scenario: string;
  readonly options: Partial<ScenarioOptions>;
}

/**
 * The default suite: every scenario but `scale`, at sizes that finish in about six
 * minutes on a 2-core machine (service and generator on one core each). About 60 fresh
 * service starts at ~2 s each are a third of that, so durations are short and the
 * transports per scenario are the ones its question is about. `scale` runs on its own,
 * per transport (`npm run loadtest -- scale --transports sse`): its steps alone take
 * longer than the suite.
 */
export const DEFAULT_SUITE: readonly SuiteStep[] = [
  { scenario: 'steady', options: { subscribers: 500, durationS: 4 } },
  {
    scenario: 'idle',
    options: {
      transports: ['grpc', 'sse', 'ws', 'longpoll', 'longpoll-h2'],
      subscribers: 1000,
      durationS: 2,
    },
  },
  {
    scenario: 'bytes',
    options: {
      transports: ['grpc', 'sse', 'sse-h2', 'ws', 'longpoll', 'longpoll-h2'],
      rate: 500,
    },
  },
  {
    scenario: 'wan',
    options: { transports: ['grpc', 'sse', 'ws', 'longpoll-h2'], durationS: 3 },
  },
  {
    scenario: 'slow-consumer',
    options: { transports: ['grpc', 'sse', 'ws'], subscribers: 100, durationS: 3 },
  },
  { scenario: 'backpressure', options: { transports: ['grpc', 'sse', 'ws'] } },
  {
    scenario: 'reconnect',
    options: { transports: ['grpc', 'sse', 'ws', 'longpoll'], durationS: 4 },
  },
  { scenario: 'unary', options: {} },
  // Streaming only (the target is about them), three rounds each: see overhead.ts.
  { scenario: 'overhead', options: { transports: ['grpc', 'sse', 'ws'], durationS: 3 } },
];

export interface SuiteOptions {
  readonly steps: readonly SuiteStep[];
  readonly transports: readonly TransportName[];
  readonly overrides: Partial<ScenarioOptions>;
  readonly target?: string;
  readonly token?: string;
  readonly tiny?: boolean;
  /** 'bare': drive the bare Node server instead of the service (checks the load test itself). */
  readonly server?: 'nest' | 'bare';
  /** Write a V8 CPU profile of every started server into this directory. */
  readonly cpuProfDir?: string;
  /** Node binary for the service and the bare servers (`--node`); default: `node` on PATH. */
  readonly node?: string;
  /** Node or V8 flags for every server started (`--node-flag`), before the script. */
  readonly nodeFlags?: readonly string[];
  /** An already running server used for every run (tests share one to stay fast). */
  readonly running?: RunningService;
  /** The same for the runs in the payload domain: a service started with STREAM_DOMAIN=payload. */
  readonly runningPayload?: RunningService;
  readonly argv: readonly string[];
  readonly progress: (line: string, final?: boolean) => void;
  readonly aborted?: () => boolean;
}

/**
 * Launches the service, or a bare server (`--server bare`, the overhead scenario's bare
 * runs), or a framework floor (the overhead scenario's long-poll floor runs).
 */
function launcher(
  server: 'nest' | 'bare',
  cpuProfDir: string | undefined,
  node?: string,
  nodeFlags: readonly string[] = [],
) {
  let started = 0;
  return (run: TransportRun, opts: { inspect: boolean }): Promise<RunningService> => {
    const kind = run.server ?? server;
    if (kind === 'nchan') return launchNchan();
    const command =
      kind === 'bare'
        ? bareServerCommand(run.transport)
        : kind === 'floor'
          ? floorServerCommand()
          : kind === 'fastify'
            ? fastifyFloorServerCommand()
            : undefined;
    // One profile per started server, named after the run it serves (node writes it at exit).
    const name = [
      String(++started).padStart(3, '0'),
      run.scenario,
      run.variant,
      run.transport,
      kind,
    ]
      .filter((p) => p !== '')
      .join('-')
      .replace(/[^A-Za-z0-9.-]+/g, '_');
    const nodeArgs = [
      ...nodeFlags,
      ...(cpuProfDir
        ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`, `--cpu-prof-name=${name}.cpuprofile`]
        : []),
    ];
    return launchService({
      env: run.env,
      inspect: opts.inspect,
      nodeArgs,
      ...(node === undefined ? {} : { node }),
      ...(command ? { command } : {}),
    });
  };
}

export async function runSuite(o: SuiteOptions): Promise<Report> {
  // The generator's core for the suite's length only (the CLI exits after; a test runner
  // goes on to other tests).
  const unpin = !o.target && !o.running ? await pinGenerator() : undefined;
  try {
    return await runSteps(o, unpin !== undefined);
  } finally {
    await unpin?.();
  }
}

async function runSteps(o: SuiteOptions, pinned: boolean): Promise<Report> {
  const startedAt = new Date().toISOString();
  const ctx: RunContext = {
    target: o.running ?? (o.target ? targetService(o.target) : undefined),
    payloadTarget: o.runningPayload,
    launch: launcher(o.server ?? 'nest', o.cpuProfDir, o.node, o.nodeFlags),
    server: o.server ?? 'nest',
    launchForEnv: o.running !== undefined,
    token: o.token,
    progress: o.progress,
    aborted: o.aborted ?? (() => false),
  };
  const runs: RunResult[] = [];
  const aborted: AbortedScenario[] = [];
  let processPerTransport = false;
  for (const step of o.steps) {
    if (ctx.aborted()) break;
    const scenario = findScenario(step.scenario);
    if (!scenario) throw new TypeError(`unknown scenario ${step.scenario}`);
    const wanted = o.overrides.transports ?? step.options.transports ?? o.transports;
    // Tiny (smoke) runs keep only the step's transport choice, not its sizes.
    const sizes = o.tiny ? {} : step.options;
    const opts: ScenarioOptions = {
      ...sizes,
      ...o.overrides,
      transports: wanted.filter(scenario.supports),
      tiny: o.tiny ?? false,
    };
    try {
      // Only for a single scenario asked for by name: the children re-run this command line.
      if (
        scenario.processPerTransport &&
        opts.transports.length > 1 &&
        !o.running &&
        o.steps.length === 1
      ) {
        const merged = await runPerProcess(o.argv, opts.transports, ctx.aborted);
        runs.push(...merged.runs);
        aborted.push(...(merged.aborted ?? []));
        processPerTransport = true;
        continue;
      }
      runs.push(...(await scenario.run(ctx, opts)));
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      aborted.push({ scenario: scenario.name, error });
      o.progress(`[${scenario.name}] aborted: ${error}`, true);
    }
  }
  return {
    schema: RESULTS_SCHEMA,
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: machineInfo(),
    versions: versions(),
    settings: {
      argv: portableArgv(o.argv),
      scenarios: o.steps.map((s) => s.scenario),
      transports: o.transports,
      pinned,
      target: o.target ?? null,
      serviceEntry: portablePath(SERVICE_ENTRY),
      ...(o.node === undefined
        ? {}
        : { serviceNode: { path: portablePath(o.node), version: nodeVersion(o.node) } }),
      ...(o.nodeFlags === undefined || o.nodeFlags.length === 0
        ? {}
        : { serviceNodeFlags: [...o.nodeFlags] }),
      ...(processPerTransport ? { processPerTransport } : {}),
    },
    runs,
    ...(aborted.length > 0 ? { aborted } : {}),
  };
}

/** The command's exit code: 1 when a run failed, a scenario aborted or nothing ran. */
export function suiteExitCode(report: Report): number {
  const ok = report.runs.length > 0 && report.runs.every((r) => r.ok);
  return ok && (report.aborted ?? []).length === 0 ? 0 : 1;
}

/** `<node> --version` of the binary given with --node (recorded beside the results). */
function nodeVersion(node: string): string {
  return execFileSync(node, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
}

export const ALL_TRANSPORTS: readonly TransportName[] = TRANSPORTS;
