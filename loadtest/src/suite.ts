import { TRANSPORTS, type TransportName } from './clients/transport';
import { machineInfo, RESULTS_SCHEMA, versions, type Report } from './report/report-data';
import type { RunResult } from './scenarios/result';
import type { RunContext, TransportRun } from './scenarios/run-options';
import { findScenario } from './scenarios/registry';
import type { ScenarioOptions } from './scenarios/scenario';
import { bareServerCommand } from './bare/bare-command';
import {
  canPin,
  launchService,
  pinGenerator,
  targetService,
  type RunningService,
} from './service/launcher';

export interface SuiteStep {
  readonly scenario: string;
  readonly options: Partial<ScenarioOptions>;
}

/**
 * The default suite: every scenario at sizes that finish in about five minutes on a
 * 2-core machine (service and generator on one core each).
 */
export const DEFAULT_SUITE: readonly SuiteStep[] = [
  { scenario: 'steady', options: { subscribers: 500, durationS: 8 } },
  { scenario: 'idle', options: { subscribers: 1000, durationS: 5 } },
  { scenario: 'bytes', options: {} },
  {
    scenario: 'wan',
    options: { transports: ['grpc', 'sse', 'ws', 'longpoll', 'longpoll-h2'], durationS: 4 },
  },
  { scenario: 'slow-consumer', options: { transports: ['grpc', 'sse', 'ws'], durationS: 6 } },
  { scenario: 'backpressure', options: { transports: ['grpc', 'sse', 'ws'] } },
  {
    scenario: 'reconnect',
    options: { transports: ['grpc', 'sse', 'ws', 'longpoll'], durationS: 6 },
  },
  { scenario: 'unary', options: {} },
  { scenario: 'overhead', options: {} },
  {
    scenario: 'scale',
    options: { transports: ['grpc', 'sse', 'ws', 'longpoll-h2'], durationS: 4 },
  },
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
  /** An already running server used for every run (tests share one to stay fast). */
  readonly running?: RunningService;
  readonly argv: readonly string[];
  readonly progress: (line: string, final?: boolean) => void;
  readonly aborted?: () => boolean;
}

/** Launches the service, or a bare server when the run belongs to the overhead scenario. */
function launcher(bareOnly: boolean) {
  return (run: TransportRun, opts: { inspect: boolean }): Promise<RunningService> => {
    const command =
      bareOnly || run.variant.startsWith('bare') ? bareServerCommand(run.transport) : undefined;
    return launchService({ env: run.env, inspect: opts.inspect, ...(command ? { command } : {}) });
  };
}

export async function runSuite(o: SuiteOptions): Promise<Report> {
  const startedAt = new Date().toISOString();
  const pinned = !o.target && !o.running && canPin() && (await pinGenerator());
  const ctx: RunContext = {
    target: o.running ?? (o.target ? targetService(o.target) : undefined),
    launch: launcher(o.server === 'bare'),
    token: o.token,
    progress: o.progress,
    aborted: o.aborted ?? (() => false),
  };
  const runs: RunResult[] = [];
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
      runs.push(...(await scenario.run(ctx, opts)));
    } catch (err) {
      o.progress(
        `[${scenario.name}] aborted: ${err instanceof Error ? err.message : String(err)}`,
        true,
      );
    }
  }
  return {
    schema: RESULTS_SCHEMA,
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: machineInfo(),
    versions: versions(),
    settings: {
      argv: o.argv,
      scenarios: o.steps.map((s) => s.scenario),
      transports: o.transports,
      pinned,
      target: o.target ?? null,
    },
    runs,
  };
}

export const ALL_TRANSPORTS: readonly TransportName[] = TRANSPORTS;
