import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TraceSamplerName, TracingConfig } from '../config/tracing-config';

/**
 * The SDK for one service instance: the configured sampler, spans batched and posted to
 * the OTLP/HTTP endpoint (JSON). It is not registered as the global provider: the
 * service hands its tracer to the code that traces, so two instances in one process
 * (tests) each export with their own settings, and nothing else in the process starts
 * spans behind the service's back.
 */
export function createTracerProvider(config: TracingConfig): TracerProvider {
  return new TracerProvider({
    sampler: samplerOf(config.sampler, config.samplerRatio),
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({
          url: config.tracesUrl,
          timeoutMillis: config.exportTimeoutMs,
        }),
        scheduledDelayMillis: config.scheduleDelayMs,
      }),
    ],
  });
}

/** `OTEL_TRACES_SAMPLER` as the specification defines each name. */
export function samplerOf(name: TraceSamplerName, ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}
