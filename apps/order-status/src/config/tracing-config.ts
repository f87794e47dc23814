import type { EnvReader } from './env-schema';

/** The samplers of the OpenTelemetry specification's `OTEL_TRACES_SAMPLER` this service builds. */
export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

/** @default the specification's default sampler: follow the caller, sample every new trace */
export const DEFAULT_TRACE_SAMPLER: TraceSamplerName = 'parentbased_always_on';
/** @default 'order-status' */
export const DEFAULT_SERVICE_NAME = 'order-status';
/** @default the OTLP/HTTP port on this host (Jaeger, the OpenTelemetry Collector, Tempo) */
export const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';
/** @default the specification's 5_000 ms between two exports of batched spans */
export const DEFAULT_BSP_SCHEDULE_DELAY_MS = 5_000;
/** @default the specification's 10_000 ms for one export, its retries included */
export const DEFAULT_OTLP_TIMEOUT_MS = 10_000;
/** The path the specification appends to OTEL_EXPORTER_OTLP_ENDPOINT for traces. */
export const OTLP_TRACES_PATH = '/v1/traces';

/** OpenTelemetry tracing (apps/order-status/src/tracing); undefined in AppConfig: off. */
export interface TracingConfig {
  /** `service.name` of every span. */
  readonly serviceName: string;
  /** Where spans are posted (OTLP/HTTP, JSON). */
  readonly tracesUrl: string;
  readonly sampler: TraceSamplerName;
  /** The ratio of the `traceidratio` samplers, 0 to 1. */
  readonly samplerRatio: number;
  /** Delay between two exports of batched spans, in ms. */
  readonly scheduleDelayMs: number;
  /** How long one export may take, its retries included, in ms. */
  readonly exportTimeoutMs: number;
}

/**
 * The standard `OTEL_*` variables (opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
 * Tracing is off unless asked for: `OTEL_TRACES_EXPORTER=otlp`, or an OTLP endpoint, turns
 * it on; `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` keeps it off. They are read
 * here, with every other setting, rather than by the SDK from `process.env`, so a bad value
 * stops start-up with the others and tests can run instances with their own settings.
 */
export function readTracingConfig(r: EnvReader): TracingConfig | undefined {
  const disabled = r.bool(
    'OTEL_SDK_DISABLED',
    false,
    'true turns OpenTelemetry off whatever the other `OTEL_*` variables say',
  );
  const endpoint = r.optional('OTEL_EXPORTER_OTLP_ENDPOINT', {
    text: `OTLP/HTTP base URL; traces go to it + \`${OTLP_TRACES_PATH}\`. Setting it turns tracing on`,
    default: DEFAULT_OTLP_ENDPOINT,
  });
  const tracesEndpoint = r.optional('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', {
    text: 'OTLP/HTTP URL for traces, used as is (over `OTEL_EXPORTER_OTLP_ENDPOINT`). Setting it turns tracing on',
  });
  const exporter = r.oneOf(
    'OTEL_TRACES_EXPORTER',
    endpoint !== undefined || tracesEndpoint !== undefined ? 'otlp' : 'none',
    ['otlp', 'none'] as const,
    {
      text: '`otlp` exports spans over OTLP/HTTP (JSON) and turns tracing on; `none` keeps it off',
      default: '`none` (`otlp` when an OTLP endpoint is set)',
    },
  );
  const serviceName = r.str('OTEL_SERVICE_NAME', DEFAULT_SERVICE_NAME, "the spans' `service.name`");
  const sampler = r.oneOf('OTEL_TRACES_SAMPLER', DEFAULT_TRACE_SAMPLER, TRACE_SAMPLERS, {
    text: "which traces are recorded; `parentbased_*` follow the caller's `traceparent` decision",
  });
  const samplerRatio = r.num(
    'OTEL_TRACES_SAMPLER_ARG',
    1,
    0,
    1,
    'the share of new traces the `traceidratio` samplers record (0.01: 1 %)',
  );
  const scheduleDelayMs = r.int(
    'OTEL_BSP_SCHEDULE_DELAY',
    DEFAULT_BSP_SCHEDULE_DELAY_MS,
    1,
    600_000,
    'ms between two exports of batched spans (a full batch of 512 goes at once)',
  );
  const exportTimeoutMs = r.int(
    'OTEL_EXPORTER_OTLP_TIMEOUT',
    DEFAULT_OTLP_TIMEOUT_MS,
    1,
    600_000,
    'ms one export of spans may take, retries included; at shutdown the wait is shorter (2 s)',
  );
  const tracesUrl =
    tracesEndpoint ??
    `${(endpoint ?? DEFAULT_OTLP_ENDPOINT).replace(/\/+$/, '')}${OTLP_TRACES_PATH}`;
  if (disabled || exporter === 'none') return undefined;
  if (!isHttpUrl(tracesUrl)) {
    r.problems.push(
      `${tracesEndpoint !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT'}=${JSON.stringify(tracesEndpoint ?? endpoint)}: must be an http:// or https:// URL`,
    );
  }
  return { serviceName, tracesUrl, sampler, samplerRatio, scheduleDelayMs, exportTimeoutMs };
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}
