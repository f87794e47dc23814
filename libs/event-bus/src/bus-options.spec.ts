import {
  DEFAULT_CHANNEL_IDLE_MS,
  DEFAULT_MAX_STREAM_AGE_JITTER_MS,
  DEFAULT_MAX_STREAM_AGE_MS,
  DEFAULT_OVERFLOW_POLICY,
  DEFAULT_QUEUE_CAPACITY,
  DEFAULT_RING_MAX_AGE_MS,
  DEFAULT_RING_SIZE,
  OverflowPolicy,
  resolveEventBusOptions,
} from './bus-options';

describe('resolveEventBusOptions', () => {
  it('fills in the documented defaults', () => {
    expect(resolveEventBusOptions()).toEqual({
      ringSize: DEFAULT_RING_SIZE,
      ringMaxAgeMs: DEFAULT_RING_MAX_AGE_MS,
      queueCapacity: DEFAULT_QUEUE_CAPACITY,
      overflowPolicy: DEFAULT_OVERFLOW_POLICY,
      maxStreamAgeMs: DEFAULT_MAX_STREAM_AGE_MS,
      maxStreamAgeJitterMs: DEFAULT_MAX_STREAM_AGE_JITTER_MS,
      channelIdleMs: DEFAULT_CHANNEL_IDLE_MS,
    });
    expect(DEFAULT_OVERFLOW_POLICY).toBe(OverflowPolicy.Conflate);
  });

  it('keeps given values, including the smallest allowed ones', () => {
    expect(
      resolveEventBusOptions({
        ringSize: 1,
        ringMaxAgeMs: 1,
        queueCapacity: 1,
        overflowPolicy: OverflowPolicy.Disconnect,
        maxStreamAgeMs: 0,
        maxStreamAgeJitterMs: 0,
        channelIdleMs: 0,
      }),
    ).toEqual({
      ringSize: 1,
      ringMaxAgeMs: 1,
      queueCapacity: 1,
      overflowPolicy: OverflowPolicy.Disconnect,
      maxStreamAgeMs: 0,
      maxStreamAgeJitterMs: 0,
      channelIdleMs: 0,
    });
  });

  it.each([
    [{ ringSize: 0 }, 'ringSize'],
    [{ ringSize: 1.5 }, 'ringSize'],
    [{ queueCapacity: 0 }, 'queueCapacity'],
    [{ channelIdleMs: -1 }, 'channelIdleMs'],
    [{ queueCapacity: NaN }, 'queueCapacity'],
    [{ ringMaxAgeMs: 0 }, 'ringMaxAgeMs'],
    [{ ringMaxAgeMs: NaN }, 'ringMaxAgeMs'],
    [{ overflowPolicy: 'block' as OverflowPolicy }, 'overflowPolicy'],
  ])('rejects %p with a TypeError naming the option', (opts, name) => {
    expect(() => resolveEventBusOptions(opts)).toThrow(TypeError);
    expect(() => resolveEventBusOptions(opts)).toThrow(name);
  });
});
