import fc from 'fast-check';
import { Counter, distribution } from './distribution';
import { LatencyRecorder } from './latency';
import { SeqTracker, sumCounts } from './seq-tracker';

describe('SeqTracker', () => {
  it('counts an in-order run as clean', () => {
    const t = new SeqTracker(0);
    for (let s = 1; s <= 100; s += 1) t.observe(s);
    expect(t.counts(100)).toEqual({
      received: 100,
      lost: 0,
      duplicates: 0,
      outOfOrder: 0,
      skippedByReset: 0,
      skipped: 0,
      resets: 0,
      highestSeq: 100,
    });
  });

  it('tells loss, duplicates and late arrivals apart', () => {
    const t = new SeqTracker(1);
    for (const s of [2, 3, 5, 6, 3, 4, 9]) t.observe(s);
    // 4 arrived late (out of order), 3 twice (duplicate), 7 and 8 never, 10 not yet (tail).
    expect(t.counts(10)).toMatchObject({ received: 6, lost: 3, duplicates: 1, outOfOrder: 1 });
  });

  it('counts seqs skipped by a reset apart from loss', () => {
    const t = new SeqTracker(0);
    t.observe(1);
    t.observe(3);
    t.reset(6);
    t.observe(7);
    expect(t.counts(7)).toMatchObject({ lost: 0, skippedByReset: 4, resets: 1, received: 3 });
  });

  it('a reset to a seq below what it had (Redis lost events) starts over from there', () => {
    // A master killed before its replica got seqs 4 and 5: the client has them, Redis
    // hands those seqs to new events and the service resets the stream to seq 3.
    const t = new SeqTracker(0);
    for (const s of [1, 2, 3, 4, 5]) t.observe(s);
    t.reset(3);
    for (const s of [4, 5, 6]) t.observe(s);
    expect(t.counts(6)).toMatchObject({ received: 8, duplicates: 0, lost: 0, resets: 1 });
    expect(t.highestSeq).toBe(6);
  });

  it('counts seqs signalled as skipped apart from loss, and a gap before them as lost', () => {
    const t = new SeqTracker(0);
    t.observe(1);
    t.skip(2, 5);
    t.observe(6);
    t.skip(9, 10); // 7 and 8 were never delivered nor signalled
    t.observe(11);
    expect(t.counts(11)).toMatchObject({ received: 3, skipped: 6, lost: 2, resets: 0 });
  });

  it('a skipped range covering seqs already received counts only the missing ones', () => {
    const t = new SeqTracker(0);
    for (const s of [1, 2, 4]) t.observe(s);
    t.skip(3, 4);
    expect(t.counts(4)).toMatchObject({ received: 3, skipped: 1, lost: 0, duplicates: 0 });
  });

  it('rejects an invalid resume point', () => {
    expect(() => new SeqTracker(-1)).toThrow(TypeError);
  });

  it('received + lost = last seq - start for any delivery order (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.array(fc.nat(), { maxLength: 400 }),
        (last, picks) => {
          const t = new SeqTracker(0);
          const seen = new Set<number>();
          let dup = 0;
          for (const p of picks) {
            const seq = (p % last) + 1;
            if (seen.has(seq)) dup += 1;
            seen.add(seq);
            t.observe(seq);
          }
          const c = t.counts(last);
          expect(c.received + c.lost).toBe(last);
          expect(c.duplicates).toBe(dup);
          expect(c.received).toBe(seen.size);
        },
      ),
    );
  });

  it('sums counts', () => {
    const a = new SeqTracker(0);
    a.observe(1);
    const b = new SeqTracker(0);
    b.observe(2);
    expect(sumCounts([a.counts(1), b.counts(2)])).toMatchObject({ received: 2, lost: 1 });
  });
});

describe('LatencyRecorder', () => {
  it('reports percentiles in ms from µs samples', () => {
    const r = new LatencyRecorder();
    for (let i = 1; i <= 1000; i += 1) r.recordUs(i * 1000); // 1..1000 ms
    const s = r.summary();
    expect(s.count).toBe(1000);
    expect(s.p50Ms).toBeCloseTo(500, -1);
    expect(s.p99Ms).toBeCloseTo(990, -1);
    expect(s.maxMs).toBeCloseTo(1000, -1);
  });

  it('clamps negative samples (clock skew) to 0 and counts them', () => {
    const r = new LatencyRecorder();
    r.recordUs(-5);
    expect(r.negative).toBe(1);
    expect(r.summary().maxMs).toBe(0);
  });

  it('is all zeros when empty', () => {
    expect(new LatencyRecorder().summary()).toMatchObject({ count: 0, p99Ms: 0 });
  });
});

describe('distribution', () => {
  it('uses nearest-rank percentiles', () => {
    const d = distribution([5, 1, 4, 2, 3]);
    expect(d).toEqual({ count: 5, p50: 3, p99: 5, max: 5, mean: 3 });
  });

  it('is zero for no samples', () => {
    expect(distribution([]).count).toBe(0);
  });
});

describe('Counter', () => {
  it('counts by key, sorted', () => {
    const c = new Counter();
    c.add('b');
    c.add('a', 2);
    c.add('b');
    expect(c.toJSON()).toEqual({ a: 2, b: 2 });
    expect(c.total).toBe(4);
  });
});
