import fc from 'fast-check';
import { cursorAfter, ResetReason, SkipReason } from '@app/contracts';
import { BoundedQueue } from './bounded-queue';
import { OverflowPolicy } from './bus-options';
import { event, PHASES_ONLY } from './testing/bus-fixtures';
import {
  JOB_DOMAIN,
  JobPhase,
  type JobEvent,
  type JobItem,
  type JobSnapshot,
} from './testing/fixture-domain';

const ev = (seq: number, phase: JobPhase = JobPhase.Building): JobItem => ({
  kind: 'step',
  step: event('o', seq, phase),
});
const reset = (seq: number): JobItem => ({
  kind: 'reset',
  reset: {
    reason: ResetReason.Gap,
    snapshot: { orderId: 'o', phase: JobPhase.Building, lastSeq: seq, updatedAtUs: 0 },
  },
});
const skip = (fromSeq: number, toSeq: number): JobItem => ({
  kind: 'skipped',
  skipped: { fromSeq, toSeq, reason: SkipReason.Overflow },
});
const drain = (q: BoundedQueue<JobEvent, JobSnapshot>): JobItem[] => {
  const out: JobItem[] = [];
  // The queue's items are the engine's; these are the job's (what the queue was given).
  for (let it = q.shift(); it !== undefined; it = q.shift()) out.push(it as JobItem);
  return out;
};
/** The seq an item brings the client to. */
const seqOf = cursorAfter;

describe('BoundedQueue', () => {
  it('is FIFO below capacity, whatever the policy', () => {
    for (const policy of Object.values(OverflowPolicy)) {
      const q = new BoundedQueue(3, policy, JOB_DOMAIN, PHASES_ONLY);
      expect(q.offer(ev(1))).toEqual({ accepted: true, dropped: 0 });
      expect(q.offer(reset(5))).toEqual({ accepted: true, dropped: 0 });
      expect(q.offer(ev(6))).toEqual({ accepted: true, dropped: 0 });
      expect(q.length).toBe(3);
      expect(drain(q).map(seqOf)).toEqual([1, 5, 6]);
      expect(q.shift()).toBeUndefined();
    }
  });

  it('conflate keeps only the newest event when full, and says which seqs it skipped', () => {
    const q = new BoundedQueue(3, OverflowPolicy.Conflate, JOB_DOMAIN, PHASES_ONLY);
    q.offer(ev(1));
    q.offer(ev(2));
    q.offer(ev(3));
    expect(q.offer(ev(4))).toEqual({ accepted: true, dropped: 3 });
    expect(drain(q)).toEqual([skip(1, 3), ev(4)]);
  });

  it('conflate merges a new skipped range into the queued one', () => {
    const q = new BoundedQueue(3, OverflowPolicy.Conflate, JOB_DOMAIN, PHASES_ONLY);
    for (let s = 1; s <= 4; s++) q.offer(ev(s)); // [skip 1..3, 4]
    q.offer(ev(5)); // [skip 1..3, 4, 5]: room again
    expect(q.offer(ev(6))).toEqual({ accepted: true, dropped: 2 });
    expect(drain(q)).toEqual([skip(1, 5), ev(6)]);
  });

  it('conflate keeps queued resets (they carry the snapshot)', () => {
    const q = new BoundedQueue(3, OverflowPolicy.Conflate, JOB_DOMAIN, PHASES_ONLY);
    q.offer(ev(1));
    q.offer(reset(5));
    q.offer(ev(6));
    // Seq 1 comes before the reset, which covers it; 6 is skipped explicitly.
    expect(q.offer(ev(7))).toEqual({ accepted: true, dropped: 2 });
    expect(drain(q)).toEqual([reset(5), skip(6, 6), ev(7)]);
  });

  it('drop-oldest replaces the oldest events by one skipped range when full', () => {
    const q = new BoundedQueue(3, OverflowPolicy.DropOldest, JOB_DOMAIN, PHASES_ONLY);
    for (let s = 1; s <= 3; s++) q.offer(ev(s));
    // The marker takes a slot too: the first overflow drops two events to make room.
    expect(q.offer(ev(4))).toEqual({ accepted: true, dropped: 2 });
    expect(q.offer(ev(5))).toEqual({ accepted: true, dropped: 1 });
    expect(drain(q)).toEqual([skip(1, 3), ev(4), ev(5)]);
  });

  it('drop-oldest keeps a reset and skips the oldest events after it', () => {
    const q = new BoundedQueue(3, OverflowPolicy.DropOldest, JOB_DOMAIN, PHASES_ONLY);
    q.offer(reset(4));
    q.offer(ev(5));
    q.offer(ev(6));
    expect(q.offer(ev(7))).toEqual({ accepted: true, dropped: 2 });
    expect(drain(q)).toEqual([reset(4), skip(5, 6), ev(7)]);
  });

  it('a reset offered to a full queue stands for everything queued before it', () => {
    for (const policy of [OverflowPolicy.Conflate, OverflowPolicy.DropOldest]) {
      const q = new BoundedQueue(2, policy, JOB_DOMAIN, PHASES_ONLY);
      q.offer(ev(1));
      q.offer(ev(2));
      expect(q.offer(reset(9))).toEqual({ accepted: true, dropped: 2 });
      expect(drain(q)).toEqual([reset(9)]);
    }
  });

  it('capacity 1: no room for a marker, so an overflow becomes a reset with the newest state', () => {
    for (const policy of [OverflowPolicy.Conflate, OverflowPolicy.DropOldest]) {
      const q = new BoundedQueue(1, policy, JOB_DOMAIN, PHASES_ONLY);
      q.offer(ev(1));
      expect(q.offer(ev(2, JobPhase.Testing))).toEqual({ accepted: true, dropped: 2 });
      expect(q.length).toBe(1);
      const [only] = drain(q);
      expect(only).toEqual({
        kind: 'reset',
        reset: {
          reason: ResetReason.Overflow,
          snapshot: { orderId: 'o', phase: JobPhase.Testing, lastSeq: 2, updatedAtUs: 0 },
        },
      });
    }
  });

  it('disconnect refuses when full and leaves the queue as it was', () => {
    const q = new BoundedQueue(2, OverflowPolicy.Disconnect, JOB_DOMAIN, PHASES_ONLY);
    q.offer(ev(1));
    q.offer(ev(2));
    expect(q.offer(ev(3))).toEqual({ accepted: false });
    expect(q.offer(reset(3))).toEqual({ accepted: false });
    expect(drain(q).map(seqOf)).toEqual([1, 2]);
  });

  it('keeps capacity 1 with a reset queued (conflate and drop-oldest)', () => {
    for (const policy of [OverflowPolicy.Conflate, OverflowPolicy.DropOldest]) {
      const q = new BoundedQueue(1, policy, JOB_DOMAIN, PHASES_ONLY);
      q.offer(reset(5));
      expect(q.offer(ev(6)).accepted).toBe(true);
      expect(q.length).toBe(1);
      // The client still learns it must replace its view, now with the newest state.
      const [only] = drain(q);
      expect(only.kind).toBe('reset');
      expect(seqOf(only)).toBe(6);
    }
  });

  it('removeUpTo, lastSeq and hasTerminal: what a replay up to a seq already covered', () => {
    const q = new BoundedQueue(10, OverflowPolicy.Conflate, JOB_DOMAIN, PHASES_ONLY);
    expect(q.lastSeq()).toBeUndefined();
    q.offer(ev(3));
    q.offer(ev(4));
    q.offer(reset(4));
    q.offer(ev(5, JobPhase.Done));
    expect(q.lastSeq()).toBe(5);
    expect(q.hasTerminal()).toBe(true);
    q.removeUpTo(4);
    expect(drain(q)).toEqual([ev(5, JobPhase.Done)]);
    q.offer(reset(9));
    expect(q.lastSeq()).toBe(9);
    expect(q.hasTerminal()).toBe(false);
  });

  it('removeUpTo trims a skipped range the replay reached into', () => {
    const q = new BoundedQueue(3, OverflowPolicy.Conflate, JOB_DOMAIN, PHASES_ONLY);
    for (let s = 1; s <= 6; s++) q.offer(ev(s)); // [skip 1..3, 4, 5] then [skip 1..5, 6]
    q.removeUpTo(2);
    expect(drain(q)).toEqual([skip(3, 5), ev(6)]);
  });

  describe('properties (one job, seqs increasing, random events and resets)', () => {
    const policy = fc.constantFrom(...Object.values(OverflowPolicy));
    const ops = fc.array(fc.constantFrom('event', 'reset', 'shift'), { maxLength: 80 });

    function run(capacity: number, p: OverflowPolicy, script: string[]) {
      const q = new BoundedQueue(capacity, p, JOB_DOMAIN, PHASES_ONLY);
      const delivered: JobItem[] = [];
      let seq = 0;
      let refused = false;
      let droppedTotal = 0;
      let offered = 0;
      const resetSeqs: number[] = [];
      for (const op of script) {
        if (op === 'shift') {
          const it = q.shift();
          if (it) delivered.push(it as JobItem);
        } else {
          seq += op === 'reset' ? 3 : 1;
          offered++;
          const r = q.offer(op === 'reset' ? reset(seq) : ev(seq));
          if (!r.accepted) {
            refused = true;
            break;
          }
          if (op === 'reset') resetSeqs.push(seq);
          droppedTotal += r.dropped;
        }
        expect(q.length).toBeLessThanOrEqual(capacity);
      }
      return { q, delivered, seq, refused, droppedTotal, offered, resetSeqs };
    }

    it('the capacity bound always holds and order is preserved', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 6 }), policy, ops, (capacity, p, script) => {
          const { q, delivered, seq, refused } = run(capacity, p, script);
          const all = [...delivered, ...drain(q)];
          const seqs = all.map(seqOf);
          expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
          // The newest state is never lost: the last item brings the client to the last seq.
          if (!refused && all.length > 0 && seq > 0) expect(seqs[seqs.length - 1]).toBe(seq);
        }),
      );
    });

    it('a reset is never dropped: at worst a newer reset stands in for it', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 6 }), policy, ops, (capacity, p, script) => {
          const { q, delivered, resetSeqs } = run(capacity, p, script);
          const all = [...delivered, ...drain(q)];
          // The client never gets to (or past) a reset's seq without receiving a reset.
          for (const s of resetSeqs) {
            const first = all.find((it) => seqOf(it) >= s);
            expect(first?.kind).toBe('reset');
          }
        }),
      );
    });

    it('disconnect never drops: it accepts below capacity and refuses when full', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 6 }), ops, (capacity, script) => {
          const { q, delivered, droppedTotal, refused, offered } = run(
            capacity,
            OverflowPolicy.Disconnect,
            script,
          );
          expect(droppedTotal).toBe(0);
          const got = delivered.length + drain(q).length;
          expect(got).toBe(refused ? offered - 1 : offered);
        }),
      );
    });
  });
});
