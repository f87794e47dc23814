import fc from 'fast-check';
import { cursorAfter, ResetReason } from '@app/contracts';
import { BoundedQueue } from './bounded-queue';
import { OverflowPolicy } from './bus-options';
import { StreamEventBus } from './event-bus';
import { ControlledStore, event, PHASES_ONLY, RecordingSink } from './testing/bus-fixtures';
import { JOB_DOMAIN, JobPhase, type JobItem } from './testing/fixture-domain';
import { asyncPropertyRuns, PROPERTY_TEST_TIMEOUT_MS } from './testing/property-bounds';

/**
 * The overflow guarantees ("every drop is signalled"), with queues small enough (1-4)
 * and scripts long enough (hundreds of operations) that every policy overflows many
 * times in every run.
 */

const POLICIES = Object.values(OverflowPolicy);
const capacity = fc.integer({ min: 1, max: 4 });
const policy = fc.constantFrom(...POLICIES);

/** What a client learns from the items it received, checked item by item. */
interface Followed {
  /** The client's cursor after each item, starting with the resume point. */
  readonly cursors: number[];
  readonly events: number;
  /** Seqs covered by skipped items. */
  readonly skipped: number;
}

/**
 * Walks the items as a client does and asserts the chain: every item starts right after
 * the cursor (an event is `cursor + 1`, a skipped range starts at `cursor + 1`, a reset
 * moves forward), so every seq is delivered once or covered by exactly one skipped range
 * or reset, in order, with no duplicate. (Two skipped items may follow each other when
 * the first left the queue before the second was made; inside the queue they merge.)
 */
function follow(items: readonly JobItem[], start: number): Followed {
  const cursors = [start];
  let cursor = start;
  let events = 0;
  let skipped = 0;
  for (const it of items) {
    switch (it.kind) {
      case 'step':
        expect(it.step.seq).toBe(cursor + 1);
        events++;
        break;
      case 'skipped':
        expect(it.skipped.fromSeq).toBe(cursor + 1);
        expect(it.skipped.toSeq).toBeGreaterThanOrEqual(it.skipped.fromSeq);
        skipped += it.skipped.toSeq - it.skipped.fromSeq + 1;
        break;
      case 'reset':
        expect(it.reset.snapshot.lastSeq).toBeGreaterThanOrEqual(cursor);
        break;
    }
    cursor = cursorAfter(it);
    cursors.push(cursor);
  }
  return { cursors, events, skipped };
}

describe('BoundedQueue overflow properties (capacity 1-4, hundreds of operations)', () => {
  type Op = 'event' | 'gap' | 'shift' | 'drain';
  // Mostly events, so a queue this small is full most of the time.
  const op = fc.constantFrom<Op>(
    'event',
    'event',
    'event',
    'event',
    'event',
    'gap',
    'shift',
    'drain',
  );
  const script = fc.array(op, { minLength: 100, maxLength: 400 });

  function run(cap: number, p: OverflowPolicy, ops: readonly Op[]) {
    const q = new BoundedQueue(cap, p, JOB_DOMAIN, PHASES_ONLY);
    const received: JobItem[] = [];
    /** The queue's whole content at each `drain`: adjacent markers must have merged. */
    const snapshots: JobItem[][] = [];
    const resetSeqs: number[] = [];
    let seq = 0;
    let refused = false;
    for (const o of ops) {
      if (o === 'shift') {
        const it = q.shift();
        if (it) received.push(it as JobItem);
      } else if (o === 'drain') {
        const all: JobItem[] = [];
        for (let it = q.shift(); it !== undefined; it = q.shift()) all.push(it as JobItem);
        snapshots.push(all);
        received.push(...all);
      } else {
        // A gap reset, as the subscriber makes one for events lost upstream.
        const next = o === 'gap' ? seq + 3 : seq + 1;
        const item: JobItem =
          o === 'gap'
            ? {
                kind: 'reset',
                reset: {
                  reason: ResetReason.Gap,
                  snapshot: {
                    orderId: 'o',
                    phase: JobPhase.Building,
                    lastSeq: next,
                    updatedAtUs: 0,
                  },
                },
              }
            : { kind: 'step', step: event('o', next) };
        if (!q.offer(item).accepted) {
          refused = true;
          break;
        }
        seq = next;
        if (o === 'gap') resetSeqs.push(next);
      }
      expect(q.length).toBeLessThanOrEqual(cap);
    }
    for (let it = q.shift(); it !== undefined; it = q.shift()) received.push(it as JobItem);
    return { received, seq, refused, resetSeqs, snapshots };
  }

  it.each(POLICIES)(
    '%s: every seq is delivered once or signalled, in order, within capacity',
    (p) => {
      fc.assert(
        fc.property(capacity, script, (cap, ops) => {
          const { received, seq, refused, snapshots } = run(cap, p, ops);
          const { cursors, skipped } = follow(received, 0);
          // Never two skipped ranges side by side inside the queue: they merge.
          for (const all of snapshots) {
            all.forEach((it, i) => {
              if (it.kind === 'skipped') expect(all[i + 1]?.kind).not.toBe('skipped');
            });
          }
          // Nothing is lost at the tail either: the client ends at the last accepted seq.
          expect(cursors.at(-1)).toBe(seq);
          if (p === OverflowPolicy.Disconnect) {
            expect(skipped).toBe(0);
            expect(received.every((it) => it.kind !== 'skipped')).toBe(true);
          } else {
            expect(refused).toBe(false);
          }
        }),
        { numRuns: 100 },
      );
    },
  );

  it('overflows for real: conflate and drop-oldest do skip under these scripts', () => {
    for (const p of [OverflowPolicy.Conflate, OverflowPolicy.DropOldest]) {
      const { received } = run(3, p, Array<Op>(50).fill('event'));
      expect(received.some((it) => it.kind === 'skipped')).toBe(true);
    }
  });

  it('a reset is never dropped: the client reaches its seq through a reset', () => {
    fc.assert(
      fc.property(capacity, policy, script, (cap, p, ops) => {
        const { received, resetSeqs } = run(cap, p, ops);
        for (const s of resetSeqs) {
          const first = received.find((it) => cursorAfter(it) >= s);
          if (first !== undefined) expect(first.kind).toBe('reset');
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe('Subscriber overflow properties through the bus (capacity 1-4, hundreds of operations)', () => {
  type Op = 'publish' | 'block' | 'drain';
  const op = fc.constantFrom<Op>('publish', 'publish', 'publish', 'publish', 'block', 'drain');

  it(
    'every seq is delivered once or signalled, in order; resuming from any cursor loses nothing',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            cap: capacity,
            policy,
            initial: fc.integer({ min: 1, max: 4 }),
            back: fc.nat(4),
            ops: fc.array(op, { minLength: 100, maxLength: 300 }),
            terminal: fc.boolean(),
            resumeAt: fc.double({ min: 0, max: 1, noNaN: true }),
          }),
          async ({ cap, policy: p, initial, back, ops, terminal, resumeAt }) => {
            const store = new ControlledStore();
            // A ring larger than the run: any cursor a client reached can be resumed from.
            const bus = new StreamEventBus(store, {
              ringSize: 1_024,
              queueCapacity: cap,
              overflowPolicy: p,
              maxStreamAgeMs: 0,
            });
            bus.start();
            try {
              for (let i = 0; i < initial; i++) store.publishNow('o');
              const afterSeq = Math.max(0, initial - back);
              const sink = new RecordingSink();
              let blocked = false;
              sink.accept = () => !blocked;
              const sub = await bus.open('o', afterSeq, sink, { transport: 'prop' });
              for (const o of ops) {
                if (o === 'publish') store.publishNow('o');
                else if (o === 'block') blocked = true;
                else {
                  blocked = false;
                  sink.fireDrain();
                }
                // The live queue stays within capacity (the replay backlog is at most `initial`).
                expect(sub.pending).toBeLessThanOrEqual(cap + initial);
              }
              if (terminal) store.publishNow('o', JobPhase.Done);
              blocked = false;
              while (sink.fireDrain());
              const last = store.lastSeq('o');

              const { cursors, skipped } = follow(sink.items, afterSeq);
              expect(sink.writesWhileFull).toBe(0);
              expect(sink.writesAfterEnd).toBe(0);
              const counted = bus.stats.skippedByTransport.get('prop')?.[p] ?? 0;
              expect(counted).toBe(skipped);
              if (p === OverflowPolicy.Disconnect) {
                expect(skipped).toBe(0);
              } else {
                // Never ended early: the client reaches the last seq, told about every drop.
                expect(cursors.at(-1)).toBe(last);
                expect(sink.ends).toEqual(terminal ? ['completed'] : []);
              }

              // Resume from any cursor the client held (as after a reconnect): exactly the
              // events after it, nothing twice, no gap.
              const from = cursors[Math.floor(resumeAt * (cursors.length - 1))];
              const again = new RecordingSink();
              await bus.open('o', from, again, { transport: 'resume', queueCapacity: 1_024 });
              expect(again.items.every((it) => it.kind === 'step')).toBe(true);
              follow(again.items, from);
              expect(again.seqs.at(-1) ?? from).toBe(last);
              sub.close();
            } finally {
              bus.stop();
            }
          },
        ),
        asyncPropertyRuns(100),
      );
    },
    PROPERTY_TEST_TIMEOUT_MS,
  );
});
