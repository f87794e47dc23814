import type { EnvReader } from './env-schema';

/**
 * The production layers the load test's ladder scenario turns off one by one to price
 * each (loadtest/src/scenarios/ladder.ts). Benchmark-only: every one is on by default.
 */
export const BENCHMARK_LAYERS = ['auth', 'validation', 'request-log', 'metrics'] as const;
export type BenchmarkLayer = (typeof BENCHMARK_LAYERS)[number];

/** Layers whose absence lets a request through that production would refuse. */
export const SECURITY_LAYERS: readonly BenchmarkLayer[] = ['auth', 'validation'];

/**
 * The domains the service can carry (registered in domains/served-domains.ts, which
 * must have one entry per name: the type check says which is missing).
 */
export const STREAM_DOMAINS = ['order', 'payload'] as const;
export type StreamDomainName = (typeof STREAM_DOMAINS)[number];

/** Which of the benchmark layers run (all of them unless `BENCHMARK_LAYERS_OFF` says). */
export interface BenchmarkConfig {
  /**
   * The events the service carries: `order` (the order domain, its publish API and
   * simulator) or `payload` (the load test's payload of N bytes, published with
   * `POST /v1/streams/:orderId/payload`), for payload-size experiments.
   */
  readonly streamDomain: StreamDomainName;
  /**
   * Token verification and per-order authorization: off, every caller is one principal
   * with every scope (orders that do not exist are still 404).
   */
  readonly auth: boolean;
  /** The global ValidationPipe (class-validator DTOs of REST bodies and parameters). */
  readonly validation: boolean;
  /** pino-http's line per request and the connection log's opened/closed lines. */
  readonly requestLog: boolean;
  /**
   * What metrics cost while serving: the per-delivery latency histogram, the GC
   * histogram and prom-client's default collectors (event-loop monitor). /metrics still
   * answers with the bus's counters, which are read only when scraped.
   */
  readonly metrics: boolean;
}

export function readBenchmarkConfig(r: EnvReader, production: boolean): BenchmarkConfig {
  const off = r.list('BENCHMARK_LAYERS_OFF', [], {
    text: `benchmark only (the load test's ladder scenario): production layers to turn off, to price each one; \`auth\` and \`validation\` are refused with NODE_ENV=production`,
    values: `comma list of ${BENCHMARK_LAYERS.map((l) => `\`${l}\``).join(', ')}`,
  });
  for (const layer of off) {
    if (!(BENCHMARK_LAYERS as readonly string[]).includes(layer)) {
      r.problems.push(
        `BENCHMARK_LAYERS_OFF: ${JSON.stringify(layer)} must be one of ${BENCHMARK_LAYERS.join(', ')}`,
      );
    } else if (production && (SECURITY_LAYERS as readonly string[]).includes(layer)) {
      r.problems.push(
        `BENCHMARK_LAYERS_OFF: ${layer} cannot be turned off with NODE_ENV=production (benchmark only)`,
      );
    }
  }
  const on = (layer: BenchmarkLayer): boolean => !off.includes(layer);
  const streamDomain = r.oneOf('STREAM_DOMAIN', 'order', STREAM_DOMAINS, {
    text: "benchmark only: the events the service carries, the order domain or the load test's payload of N bytes (`POST /v1/streams/:orderId/payload`, no order routes, no simulator)",
  });
  return {
    streamDomain,
    auth: on('auth'),
    validation: on('validation'),
    requestLog: on('request-log'),
    metrics: on('metrics'),
  };
}
