import { marginalKB, plateauPauses, type Plateau } from './idle';

const KB = 1024;

/**
 * Plateaus at the given connection counts, each connection costing `kbEach` KB of RSS
 * (half of it heap), plus a one-off `steps[count]` MB of RSS from that count on.
 */
function plateaus(
  counts: readonly number[],
  kbEach: number,
  steps: Record<number, number> = {},
): Plateau[] {
  let oneOff = 0;
  return counts.map((connected) => {
    oneOff += (steps[connected] ?? 0) * KB;
    return {
      connected,
      rssBytes: 100 * KB * KB + connected * kbEach * KB + oneOff,
      heapBytes: 40 * KB * KB + connected * (kbEach / 2) * KB,
    };
  });
}

describe('plateauPauses', () => {
  it('pauses at each eighth, never at 0 or at the last subscriber, each count once', () => {
    expect(plateauPauses(1000)).toEqual([125, 250, 375, 500, 625, 750, 875]);
    expect(plateauPauses(5)).toEqual([1, 2, 3, 4]);
    expect(plateauPauses(2)).toEqual([1]);
    expect(plateauPauses(1)).toEqual([]);
    expect(plateauPauses(1000, 4)).toEqual([250, 500, 750]);
  });
});

describe('marginalKB', () => {
  it('is the per-connection slope past the first stretch', () => {
    // A warm-up cost of 8 MB within the first stretch does not count.
    const p = plateaus([0, 250, 500, 750, 1000], 12, { 250: 8 * 1024 });
    expect(marginalKB(p, 'rssBytes')).toEqual({ median: 12, stretches: [12, 12, 12] });
    expect(marginalKB(p, 'heapBytes')?.median).toBe(6);
  });

  it('is not moved by a one-off step inside one later stretch', () => {
    // 7 MB appear once between 500 and 750 connections: 28 KB "per connection" there.
    const p = plateaus([0, 250, 500, 750, 1000], 12, { 750: 7 * 1024 });
    const rss = marginalKB(p, 'rssBytes');
    expect(rss?.stretches).toEqual([12, 40.7, 12]);
    expect(rss?.median).toBe(12);
  });

  it('averages the middle two of an even count of stretches', () => {
    const p = plateaus([0, 1, 2, 3, 4, 5], 10, { 3: 1, 4: 3 });
    expect(marginalKB(p, 'rssBytes')).toEqual({ median: 10.5, stretches: [10, 11, 13, 10] });
  });

  it('is undefined without a stretch past the first, or without the figure', () => {
    expect(marginalKB(plateaus([0, 250], 12), 'rssBytes')).toBeUndefined();
    const noHeap = plateaus([0, 1, 2, 3], 12).map((x) => ({ ...x, heapBytes: undefined }));
    expect(marginalKB(noHeap, 'heapBytes')).toBeUndefined();
  });
});
