import fc from 'fast-check';
import { DeadlineQueue, MAX_TIMER_MS, type DeadlineEntry } from './deadline-queue';

class Entry implements DeadlineEntry {
  deadlineSlot = -1;
  deadlineAtMs = Infinity;
  constructor(
    readonly name: string,
    private readonly fired: string[],
    private readonly then?: () => void,
  ) {}
  onDeadline(): void {
    this.fired.push(this.name);
    this.then?.();
  }
}

describe('DeadlineQueue', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('fires each entry once, in deadline order, at its deadline, on one timer', () => {
    const q = new DeadlineQueue();
    const fired: string[] = [];
    const now = Date.now();
    for (const [name, inMs] of [
      ['c', 300],
      ['a', 100],
      ['b', 200],
      ['a2', 100],
    ] as const) {
      q.schedule(new Entry(name, fired), now + inMs);
    }
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(fired.sort()).toEqual(['a', 'a2']);
    jest.advanceTimersByTime(200);
    expect(fired.slice(2)).toEqual(['b', 'c']);
    expect(q.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('a cancelled entry never fires; a rescheduled one fires at its new deadline only', () => {
    const q = new DeadlineQueue();
    const fired: string[] = [];
    const [gone, moved, kept] = ['gone', 'moved', 'kept'].map((n) => new Entry(n, fired));
    const now = Date.now();
    q.schedule(gone, now + 100);
    q.schedule(moved, now + 150);
    q.schedule(kept, now + 200);
    q.cancel(gone);
    q.cancel(gone);
    q.schedule(moved, now + 500);
    expect(q.size).toBe(2);
    jest.advanceTimersByTime(300);
    expect(fired).toEqual(['kept']);
    jest.advanceTimersByTime(200);
    expect(fired).toEqual(['kept', 'moved']);
    expect([gone, moved, kept].map((e) => e.deadlineSlot)).toEqual([-1, -1, -1]);
  });

  it('keeps its timer when the earliest deadline moves later, and drops it when none is left', () => {
    const q = new DeadlineQueue();
    const fired: string[] = [];
    const [first, second] = ['first', 'second'].map((n) => new Entry(n, fired));
    const now = Date.now();
    q.schedule(first, now + 100);
    q.schedule(second, now + 200);
    const arms = jest.spyOn(global, 'setTimeout');
    const disarms = jest.spyOn(global, 'clearTimeout');
    try {
      // The entry due first goes (an answered poll): the armed timer stays.
      q.cancel(first);
      expect(arms).not.toHaveBeenCalled();
      expect(disarms).not.toHaveBeenCalled();
      // It fires early, finds nothing due and arms for what is left.
      jest.advanceTimersByTime(100);
      expect(fired).toEqual([]);
      expect(arms).toHaveBeenCalledTimes(1);
      jest.advanceTimersByTime(100);
      expect(fired).toEqual(['second']);
      // A sooner deadline re-arms at once; the last one cancelled leaves no timer behind.
      q.schedule(first, Date.now() + 500);
      q.schedule(second, Date.now() + 50);
      expect(jest.getTimerCount()).toBe(1);
      q.cancel(second);
      q.cancel(first);
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      arms.mockRestore();
      disarms.mockRestore();
    }
  });

  it('an entry may schedule itself again from onDeadline', () => {
    const q = new DeadlineQueue();
    const fired: string[] = [];
    let rounds = 0;
    const entry: Entry = new Entry('again', fired, () => {
      if (++rounds < 3) q.schedule(entry, Date.now() + 50);
    });
    q.schedule(entry, Date.now() + 50);
    jest.advanceTimersByTime(1_000);
    expect(fired).toEqual(['again', 'again', 'again']);
  });

  it('waits past what setTimeout can hold (~24.8 days) without firing early', () => {
    const q = new DeadlineQueue();
    const fired: string[] = [];
    q.schedule(new Entry('far', fired), Date.now() + MAX_TIMER_MS + 10_000);
    jest.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).toEqual([]);
    jest.advanceTimersByTime(10_000);
    expect(fired).toEqual(['far']);
  });

  it('refuses a deadline that is not a number', () => {
    expect(() => new DeadlineQueue().schedule(new Entry('x', []), NaN)).toThrow(TypeError);
  });

  it('any mix of schedules and cancels fires exactly the live entries, each at its deadline', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ entry: fc.nat(19), inMs: fc.nat(1_000), cancel: fc.boolean() }), {
          maxLength: 80,
        }),
        (ops) => {
          const q = new DeadlineQueue();
          const fired: string[] = [];
          const firedAt = new Map<string, number>();
          const entries = Array.from(
            { length: 20 },
            (_, i) => new Entry(String(i), fired, () => firedAt.set(String(i), Date.now())),
          );
          const due = new Map<string, number>();
          const start = Date.now();
          for (const op of ops) {
            const e = entries[op.entry];
            if (op.cancel) {
              q.cancel(e);
              due.delete(e.name);
            } else {
              q.schedule(e, start + op.inMs);
              due.set(e.name, start + op.inMs);
            }
          }
          jest.advanceTimersByTime(1_001);
          expect(fired.sort()).toEqual([...due.keys()].sort());
          for (const [name, at] of due) expect(firedAt.get(name)).toBe(at);
          expect(q.size).toBe(0);
        },
      ),
    );
  });
});
