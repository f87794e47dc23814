import fc from 'fast-check';
import { ReplayRing } from './replay-ring';
import { event } from './testing/bus-fixtures';

const MS = 1000; // microseconds per millisecond
const seqsOf = (events: { seq: number }[] | undefined) => events?.map((e) => e.seq);

describe('ReplayRing', () => {
  it('is empty at first: nothing is covered', () => {
    const ring = new ReplayRing(4, 1_000);
    expect(ring.size).toBe(0);
    expect(ring.firstSeq(0)).toBeUndefined();
    expect(ring.after(0, 0)).toBeUndefined();
  });

  it('keeps the last N events, contiguous, and after(seq) returns exactly events > seq', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: -1, max: 70 }),
        (capacity, count, startSeq, query) => {
          const ring = new ReplayRing(capacity, 60_000);
          for (let i = 0; i < count; i++) ring.push(event('o', startSeq + i));
          const last = startSeq + count - 1;
          const first = Math.max(startSeq, last - capacity + 1);
          expect(ring.size).toBe(last - first + 1);
          expect(ring.firstSeq(0)).toBe(first);
          const afterSeq = startSeq - 1 + query;
          const got = ring.after(afterSeq, 0);
          if (afterSeq >= last) expect(got).toEqual([]);
          else if (afterSeq < first - 1) expect(got).toBeUndefined();
          else {
            const want: number[] = [];
            for (let s = afterSeq + 1; s <= last; s++) want.push(s);
            expect(seqsOf(got)).toEqual(want);
          }
        },
      ),
    );
  });

  it('after(first - 1) is covered, after(first - 2) is not', () => {
    const ring = new ReplayRing(3, 60_000);
    for (let s = 1; s <= 10; s++) ring.push(event('o', s));
    expect(seqsOf(ring.after(7, 0))).toEqual([8, 9, 10]);
    expect(ring.after(6, 0)).toBeUndefined();
    expect(ring.after(10, 0)).toEqual([]);
    expect(ring.after(99, 0)).toEqual([]);
  });

  it('clear() forgets everything, and the ring restarts at the next push', () => {
    const ring = new ReplayRing(3, 60_000);
    for (let s = 1; s <= 5; s++) ring.push(event('o', s));
    ring.clear();
    expect(ring.size).toBe(0);
    expect(ring.after(0, 0)).toBeUndefined();
    ring.push(event('o', 9));
    expect(ring.firstSeq(0)).toBe(9);
    expect(seqsOf(ring.after(8, 0))).toEqual([9]);
    expect(ring.after(7, 0)).toBeUndefined();
  });

  it('prunes events older than maxAgeMs on read, but always keeps the newest', () => {
    const ring = new ReplayRing(10, 100);
    ring.push(event('o', 1, undefined, 0));
    ring.push(event('o', 2, undefined, 50 * MS));
    ring.push(event('o', 3, undefined, 120 * MS));
    // Read at 160 ms: events published before 60 ms are too old (1 and 2).
    expect(seqsOf(ring.after(2, 160 * MS))).toEqual([3]);
    expect(ring.after(1, 160 * MS)).toBeUndefined();
    expect(ring.size).toBe(1);
    // Much later: the newest event stays, so resuming from just before it still works.
    expect(seqsOf(ring.after(2, 10_000 * MS))).toEqual([3]);
    expect(ring.after(3, 10_000 * MS)).toEqual([]);
    expect(ring.firstSeq(10_000 * MS)).toBe(3);
  });

  it('prunes on push using the pushed event time', () => {
    const ring = new ReplayRing(10, 100);
    ring.push(event('o', 1, undefined, 0));
    ring.push(event('o', 2, undefined, 99 * MS));
    expect(ring.size).toBe(2);
    ring.push(event('o', 3, undefined, 150 * MS));
    expect(ring.size).toBe(2);
    expect(ring.firstSeq(150 * MS)).toBe(2);
  });

  it('age pruning never empties the ring and keeps what is young enough', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1_000 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 3_000 }),
        (gapsMs, readAtExtraMs) => {
          const maxAgeMs = 500;
          const ring = new ReplayRing(64, maxAgeMs);
          let t = 0;
          const times: number[] = [];
          gapsMs.forEach((gap, i) => {
            t += gap;
            times.push(t);
            ring.push(event('o', i + 1, undefined, t * MS));
          });
          const now = t + readAtExtraMs;
          const last = gapsMs.length;
          // The expected first seq: the oldest event young enough, or else the newest.
          let first = times.findIndex((at) => at >= now - maxAgeMs) + 1;
          if (first === 0) first = last;
          expect(ring.firstSeq(now * MS)).toBe(first);
          expect(seqsOf(ring.after(first - 1, now * MS))).toHaveLength(last - first + 1);
          if (first > 1) expect(ring.after(first - 2, now * MS)).toBeUndefined();
          expect(ring.size).toBe(last - first + 1);
          expect(seqsOf(ring.after(last - 1, now * MS))).toEqual([last]);
        },
      ),
    );
  });
});
