import { ConfigError } from './env-schema';
import { loadConfig } from './app-config';

const PRODUCTION_KEYS = { NODE_ENV: 'production', AUTH_HS256_SECRET: 'x'.repeat(32) };

describe('BENCHMARK_LAYERS_OFF', () => {
  it('leaves every layer on by default', () => {
    expect(loadConfig({}).benchmark).toEqual({
      streamDomain: 'order',
      auth: true,
      validation: true,
      requestLog: true,
      metrics: true,
    });
  });

  it('turns the listed layers off', () => {
    const b = loadConfig({ BENCHMARK_LAYERS_OFF: 'auth, request-log' }).benchmark;
    expect(b).toEqual({
      streamDomain: 'order',
      auth: false,
      validation: true,
      requestLog: false,
      metrics: true,
    });
  });

  it('names an unknown layer', () => {
    expect(() => loadConfig({ BENCHMARK_LAYERS_OFF: 'tracing' })).toThrow(
      /BENCHMARK_LAYERS_OFF: "tracing" must be one of auth, validation, request-log, metrics/,
    );
  });

  it('refuses to weaken security in production, and allows the rest', () => {
    expect(() =>
      loadConfig({ ...PRODUCTION_KEYS, BENCHMARK_LAYERS_OFF: 'metrics,auth,validation' }),
    ).toThrow(ConfigError);
    const err = (() => {
      try {
        loadConfig({ ...PRODUCTION_KEYS, BENCHMARK_LAYERS_OFF: 'auth,validation' });
      } catch (e) {
        return e as ConfigError;
      }
      return undefined;
    })();
    expect(err?.problems).toEqual([
      'BENCHMARK_LAYERS_OFF: auth cannot be turned off with NODE_ENV=production (benchmark only)',
      'BENCHMARK_LAYERS_OFF: validation cannot be turned off with NODE_ENV=production (benchmark only)',
    ]);
    const b = loadConfig({ ...PRODUCTION_KEYS, BENCHMARK_LAYERS_OFF: 'metrics,request-log' });
    expect(b.benchmark).toMatchObject({ auth: true, requestLog: false, metrics: false });
  });
});

describe('STREAM_DOMAIN', () => {
  it('carries the payload domain when asked, and names an unknown domain', () => {
    expect(loadConfig({ STREAM_DOMAIN: 'payload' }).benchmark.streamDomain).toBe('payload');
    expect(() => loadConfig({ STREAM_DOMAIN: 'parcel' })).toThrow(
      /STREAM_DOMAIN="parcel": must be one of order, payload/,
    );
  });
});
