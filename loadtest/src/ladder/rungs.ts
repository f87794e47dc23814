import type { TransportName } from '../clients/transport';
import type { ServerKind } from '../scenarios/run-options';

/**
 * One step of the middleware ladder: a server, and the service's benchmark switches
 * (`BENCHMARK_LAYERS_OFF`, docs/configuration.md) that leave every layer above it off.
 */
export interface LadderRung {
  readonly id: string;
  /** The row's name in the report and the run's variant. */
  readonly label: string;
  /** What this rung adds to the one below it. */
  readonly adds: string;
  readonly server: ServerKind;
  /** The service's environment for this rung (service rungs only). */
  readonly env?: Readonly<Record<string, string>>;
  /** Where the rung exists; absent: every transport. */
  readonly transports?: readonly TransportName[];
  /** Why it cannot run in this build; the report says so instead of a figure. */
  readonly unavailable?: string;
  /**
   * The service exports spans: the scenario starts an OTLP sink on loopback (OtlpSink)
   * and adds its URL as `OTEL_EXPORTER_OTLP_ENDPOINT`.
   */
  readonly exportsSpans?: boolean;
}

/** The service's layers, in the order the ladder adds them (the switch's own names). */
const SERVICE_LAYERS = ['auth', 'validation', 'request-log', 'metrics'] as const;

/** The framework floors serve long-poll only (loadtest/src/framework-floors). */
const FLOOR_TRANSPORTS: readonly TransportName[] = ['longpoll', 'longpoll-h2'];

/**
 * The service with the first `on` layers of SERVICE_LAYERS on and the rest off. Log lines
 * are written (LOG_LEVEL=info, the service's default) from the request-log rung up; below
 * it the load test's usual `warn` keeps the connection log quiet.
 */
function serviceEnv(on: number): Record<string, string> {
  const off = SERVICE_LAYERS.slice(on);
  return {
    ...(off.length > 0 ? { BENCHMARK_LAYERS_OFF: off.join(',') } : {}),
    LOG_LEVEL: on >= SERVICE_LAYERS.indexOf('request-log') + 1 ? 'info' : 'warn',
  };
}

/**
 * The metrics rung's environment with OpenTelemetry on, sampling `ratio` of the traces.
 * The load is the service's simulator, whose every publish starts a trace (publish,
 * store, deliver spans), as every publish of a traced production caller would.
 */
function tracingEnv(ratio: string): Record<string, string> {
  return {
    ...serviceEnv(SERVICE_LAYERS.length),
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: ratio,
  };
}

/**
 * Bare Node -> Fastify -> NestJS routing -> the service with each production layer added
 * in turn, then tracing at 1 % and 100 % sampling (docs/tracing.md).
 */
export const LADDER_RUNGS: readonly LadderRung[] = [
  {
    id: 'bare',
    label: 'bare Node',
    adds: 'Node http/http2/grpc-js, same wire format',
    server: 'bare',
  },
  {
    id: 'fastify',
    label: 'Fastify',
    adds: "Fastify's routing, hooks and reply",
    server: 'fastify',
    transports: FLOOR_TRANSPORTS,
  },
  {
    id: 'nest-floor',
    label: 'NestJS routing',
    adds: "Nest's router, a bearer guard and the handler chain",
    server: 'floor',
    transports: FLOOR_TRANSPORTS,
  },
  {
    id: 'service',
    label: 'service, layers off',
    adds: 'the service: its bus, queues, connection life cycle, security headers, CORS',
    server: 'nest',
    env: serviceEnv(0),
  },
  {
    id: 'auth',
    label: '+ authentication',
    adds: 'token verification and per-order authorization',
    server: 'nest',
    env: serviceEnv(1),
  },
  {
    id: 'validation',
    label: '+ validation',
    adds: 'the global ValidationPipe',
    server: 'nest',
    env: serviceEnv(2),
  },
  {
    id: 'request-log',
    label: '+ request logging',
    adds: 'a line per request and per connection (LOG_LEVEL=info)',
    server: 'nest',
    env: serviceEnv(3),
  },
  {
    id: 'metrics',
    label: '+ metrics',
    adds: 'delivery-latency and GC histograms, default collectors',
    server: 'nest',
    env: serviceEnv(4),
  },
  {
    id: 'tracing-1',
    label: '+ tracing 1 %',
    adds: 'OpenTelemetry, 1 % of traces sampled',
    server: 'nest',
    env: tracingEnv('0.01'),
    exportsSpans: true,
  },
  {
    id: 'tracing-100',
    label: '+ tracing 100 %',
    adds: 'OpenTelemetry, every trace sampled',
    server: 'nest',
    env: tracingEnv('1'),
    exportsSpans: true,
  },
];

/** The share of traces a tracing rung samples (`OTEL_TRACES_SAMPLER_ARG`; 1 without it). */
export function samplingRatio(rung: LadderRung): number {
  const arg = rung.env?.OTEL_TRACES_SAMPLER_ARG;
  return arg === undefined ? 1 : Number(arg);
}

/** Whether a rung applies to `transport` (it may still be unavailable in this build). */
export const rungApplies = (rung: LadderRung, transport: TransportName): boolean =>
  rung.transports === undefined || rung.transports.includes(transport);

/**
 * The rungs a round runs for `transport`, bottom to top: those of `ids` when given
 * (`--rungs`). At smoke size only the bottom, the service with every layer off and the
 * top one: each rung starts a server, and the switches themselves have their own spec
 * (test/ops/benchmark-layers.e2e-spec.ts).
 */
export function runnableRungs(
  transport: TransportName,
  tiny = false,
  ids?: readonly string[],
): LadderRung[] {
  const all = LADDER_RUNGS.filter(
    (r) =>
      r.unavailable === undefined &&
      rungApplies(r, transport) &&
      (ids === undefined || ids.includes(r.id)),
  );
  if (!tiny || ids !== undefined) return all;
  return all.filter((r, i) => i === 0 || r.id === 'service' || i === all.length - 1);
}
