import { LATENCY_SAMPLE_MAX, latencySampleStride } from './latency-sample';

describe('latencySampleStride', () => {
  it('samples everyone up to the cap', () => {
    expect(latencySampleStride(LATENCY_SAMPLE_MAX, LATENCY_SAMPLE_MAX)).toBe(1);
  });

  it.each([
    [5_000, 5_000],
    [5_000, 10],
    [5_000, 1],
    [2_000, 10],
  ])('samples at most about the cap and every order (%i subscribers, %i orders)', (n, k) => {
    const stride = latencySampleStride(n, k);
    const sampled = Array.from({ length: n }, (_, i) => i).filter((i) => i % stride === 0);
    expect(sampled.length).toBeLessThanOrEqual(LATENCY_SAMPLE_MAX);
    expect(sampled.length).toBeGreaterThan(LATENCY_SAMPLE_MAX / 2);
    expect(new Set(sampled.map((i) => i % k)).size).toBe(Math.min(k, sampled.length));
  });
});
