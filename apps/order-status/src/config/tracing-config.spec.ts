import { EnvReader, type Env } from './env-schema';
import { readTracingConfig } from './tracing-config';

function read(env: Env) {
  const r = new EnvReader(env);
  return { config: readTracingConfig(r), problems: r.problems };
}

describe('OTEL_* settings', () => {
  it('tracing is off with no OTEL_* variable', () => {
    expect(read({})).toEqual({ config: undefined, problems: [] });
  });

  it('an OTLP endpoint turns it on, traces at its /v1/traces', () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).config).toEqual({
      serviceName: 'order-status',
      tracesUrl: 'http://collector:4318/v1/traces',
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      scheduleDelayMs: 5_000,
      exportTimeoutMs: 10_000,
    });
  });

  it('the traces endpoint is used as is; OTEL_TRACES_EXPORTER=otlp uses the default', () => {
    expect(
      read({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://tempo.example/otlp/v1/traces' }).config
        ?.tracesUrl,
    ).toBe('https://tempo.example/otlp/v1/traces');
    expect(read({ OTEL_TRACES_EXPORTER: 'otlp' }).config?.tracesUrl).toBe(
      'http://localhost:4318/v1/traces',
    );
  });

  it('OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none keep it off', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(read({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).config).toBeUndefined();
    expect(read({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).config).toBeUndefined();
  });

  it('reads the sampler and its ratio', () => {
    const { config } = read({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.01',
      OTEL_SERVICE_NAME: 'orders-eu',
    });
    expect(config).toMatchObject({
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.01,
      serviceName: 'orders-eu',
    });
  });

  it('names every bad value', () => {
    expect(
      read({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
        OTEL_TRACES_EXPORTER: 'zipkin',
        OTEL_TRACES_SAMPLER: 'jaeger_remote',
        OTEL_TRACES_SAMPLER_ARG: '2',
      }).problems,
    ).toEqual([
      'OTEL_TRACES_EXPORTER="zipkin": must be one of otlp, none',
      expect.stringContaining('OTEL_TRACES_SAMPLER="jaeger_remote": must be one of always_on'),
      'OTEL_TRACES_SAMPLER_ARG="2": must be a number from 0 to 1',
      'OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318": must be an http:// or https:// URL',
    ]);
  });
});
