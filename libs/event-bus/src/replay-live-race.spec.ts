import fc from 'fast-check';
import { ResetReason, StreamEndReason } from '@app/contracts';
import type { StreamStore } from '@app/store/stream-store';
import { StreamEventBus } from './event-bus';
import { ControlledStore, inMemoryJobStore, RecordingSink } from './testing/bus-fixtures';
import {
  JobPhase,
  publishPhaseSync,
  publishProgressSync,
  type JobEvent,
  type JobSnapshot,
} from './testing/fixture-domain';
import { asyncPropertyRuns, PROPERTY_TEST_TIMEOUT_MS } from './testing/property-bounds';
import {
  macrotask,
  READ_POINTS,
  sequenceProblems,
  YieldingStore,
  type ReadPoint,
} from './testing/yielding-store';

/**
 * The replay/live race with reads that really yield: live events are published while the
 * bus is waiting for the store's snapshot or history, at every point of those reads, on a
 * store with history (the ring does not reach back: the history is read) and on the
 * in-memory store (no history: an honest reset). Whatever the ordering, a subscriber sees
 * no gap and no duplicate, in order, and completes exactly once.
 */

const ORDER = 'o';
const INITIAL = 8;
const RING_SIZE = 4;

interface Backend {
  readonly name: string;
  readonly hasHistory: boolean;
  make(): {
    inner: StreamStore<JobEvent, JobSnapshot>;
    publish: (phase: JobPhase) => number;
    lastSeq: () => number;
  };
}

const BACKENDS: readonly Backend[] = [
  {
    name: 'a store with history',
    hasHistory: true,
    make() {
      const inner = new ControlledStore();
      return {
        inner,
        publish: (phase) => inner.publishNow(ORDER, phase).seq,
        lastSeq: () => inner.lastSeq(ORDER),
      };
    },
  },
  {
    // Keeps each stream's last events itself (256 by default): more than this spec needs.
    // It enforces the life cycle, so the spec's stream of `building` becomes what a real
    // one is: the job starts building, then progress reports follow (both kinds share the
    // seqs).
    name: 'the in-memory store',
    hasHistory: true,
    make() {
      const inner = inMemoryJobStore();
      let last = 0;
      let building = false;
      const next = (phase: JobPhase): number => {
        // The first `building` starts the build; the later ones are progress reports.
        if (phase === JobPhase.Building && building) {
          return publishProgressSync(inner, ORDER, last % 100).seq;
        }
        if (phase === JobPhase.Building) building = true;
        return publishPhaseSync(inner, ORDER, phase).seq;
      };
      return {
        inner,
        publish: (phase) => (last = next(phase)),
        lastSeq: () => last,
      };
    },
  },
];

/**
 * How the subscriber meets the order: `fresh` (an instance that has not seen the order:
 * snapshot read, then history), `behind` (the ring does not reach back: history read
 * only), `ring` (the ring covers it: no read at all).
 */
type Reach = 'fresh' | 'behind' | 'ring';
const AFTER_SEQ: Record<Reach, number> = { fresh: 2, behind: 2, ring: INITIAL - 2 };
const READS: Record<Reach, readonly ReadPoint[]> = {
  fresh: READ_POINTS,
  behind: ['history:before', 'history:after'],
  ring: [],
};
/** Besides the read points: right after open() was called, and after it resolved. */
type When = ReadPoint | 'at-open' | 'after-open';

interface Staged {
  readonly backend: Backend;
  readonly reach: Reach;
  readonly when: When;
  readonly count: number;
  readonly terminal: boolean;
}

async function runStaged({ backend, reach, when, count, terminal }: Staged): Promise<void> {
  const { inner, publish, lastSeq } = backend.make();
  const store = new YieldingStore(inner);
  const bus = new StreamEventBus(store, { ringSize: RING_SIZE, queueCapacity: 1_000 });
  if (reach !== 'fresh') bus.start();
  try {
    publish(JobPhase.Queued);
    // The bus keeps a channel (ring and snapshot) only for an order someone here follows:
    // an earlier subscriber makes this instance one that has seen the order.
    const warm = reach === 'fresh' ? undefined : await bus.open(ORDER, 0, new RecordingSink());
    store.reached.length = 0;
    for (let i = 1; i < INITIAL; i++) publish(JobPhase.Building);
    // A fresh instance starts following the feed now: it has not seen the order yet.
    if (reach === 'fresh') bus.start();
    let staged = false;
    const stage = () => {
      staged = true;
      for (let i = 1; i <= count; i++)
        publish(terminal && i === count ? JobPhase.Done : JobPhase.Building);
    };
    store.hook = (point) => {
      if (point === when && !staged) stage();
    };
    const sink = new RecordingSink();
    const afterSeq = AFTER_SEQ[reach];
    const opening = bus.open(ORDER, afterSeq, sink, { transport: 'race' });
    if (when === 'at-open') stage();
    const sub = await opening;
    if (when === 'after-open') stage();
    expect(staged).toBe(true);
    expect(store.reached).toEqual(READS[reach]);
    if (!terminal) {
      publish(JobPhase.Building);
      publish(JobPhase.Building);
    }
    await macrotask();

    expect(sequenceProblems(sink.items, afterSeq, lastSeq())).toEqual([]);
    const resets = sink.resets.map((r) => (r.kind === 'reset' ? r.reset.reason : undefined));
    expect(resets).toEqual(
      backend.hasHistory || reach === 'ring' ? [] : [ResetReason.BeyondRetention],
    );
    expect(sink.ends).toEqual(terminal ? [StreamEndReason.Completed] : []);
    expect(sink.writesAfterEnd).toBe(0);
    warm?.close();
    expect(bus.subscriberCount()).toBe(terminal ? 0 : 1);
    sub.close();
    expect(bus.subscriberCount()).toBe(0);
    expect(bus.stats.subscriptionsByTransport.get('race')).toBe(0);
  } finally {
    bus.stop();
    await store.close();
  }
}

const cases: Staged[] = [];
for (const backend of BACKENDS)
  for (const reach of ['fresh', 'behind', 'ring'] as const)
    for (const when of ['at-open', ...READS[reach], 'after-open'] as When[])
      for (const count of [1, 3])
        for (const terminal of [false, true]) cases.push({ backend, reach, when, count, terminal });

describe('the replay/live race, with store reads that yield', () => {
  it.each(cases.map((c) => [c.backend.name, c.reach, c.when, c.count, c.terminal, c] as const))(
    '%s, %s subscriber, %s: %d event(s) (terminal: %s) arrive exactly once, in order',
    async (_b, _r, _w, _n, _t, staged) => {
      await runStaged(staged);
    },
  );

  it(
    'many subscribers opening while a publisher runs: each sees its exact sequence',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            backend: fc.constantFrom(...BACKENDS),
            fresh: fc.boolean(),
            initial: fc.integer({ min: 1, max: 12 }),
            // Subscribers: where each resumes (as a distance back from the last seq at its
            // open) and how many events are published before it opens.
            subs: fc.array(fc.record({ back: fc.nat(14), delay: fc.nat(3) }), {
              minLength: 1,
              maxLength: 6,
            }),
            // Extra turns each read waits, so reads and publishes interleave differently.
            readTurns: fc.array(fc.nat(3), { minLength: 1, maxLength: 8 }),
            perTurn: fc.integer({ min: 1, max: 3 }),
            live: fc.integer({ min: 0, max: 40 }),
            terminal: fc.boolean(),
          }),
          async ({ backend, fresh, initial, subs, readTurns, perTurn, live, terminal }) => {
            const { inner, publish, lastSeq } = backend.make();
            const store = new YieldingStore(inner);
            let turn = 0;
            store.hook = async () => {
              for (let i = readTurns[turn++ % readTurns.length]; i > 0; i--) await macrotask();
            };
            const bus = new StreamEventBus(store, { ringSize: RING_SIZE, queueCapacity: 1_000 });
            if (!fresh) bus.start();
            try {
              publish(JobPhase.Queued);
              for (let i = 1; i < initial; i++) publish(JobPhase.Building);
              if (fresh) bus.start();
              // The publisher: `perTurn` events every macrotask until `live` are out, the
              // last one terminal when asked; it runs while the subscribers' reads wait.
              let published = 0;
              const publisher = (async () => {
                while (published < live) {
                  for (let i = 0; i < perTurn && published < live; i++) {
                    published++;
                    publish(terminal && published === live ? JobPhase.Done : JobPhase.Building);
                  }
                  await macrotask();
                }
              })();
              const opened = subs.map(async ({ back, delay }) => {
                for (let i = 0; i < delay; i++) await macrotask();
                const afterSeq = Math.max(0, lastSeq() - back);
                const sink = new RecordingSink();
                const sub = await bus.open(ORDER, afterSeq, sink, { transport: 'race' });
                return { afterSeq, sink, sub };
              });
              const subscribers = await Promise.all(opened);
              await publisher;
              await macrotask();

              const finished = terminal && live > 0;
              for (const { afterSeq, sink } of subscribers) {
                expect(sequenceProblems(sink.items, afterSeq, lastSeq())).toEqual([]);
                if (backend.hasHistory) expect(sink.resets).toEqual([]);
                expect(sink.ends).toEqual(finished ? [StreamEndReason.Completed] : []);
                expect(sink.writesAfterEnd).toBe(0);
              }
              expect(bus.subscriberCount()).toBe(finished ? 0 : subscribers.length);
              for (const { sub } of subscribers) sub.close();
              expect(bus.subscriberCount()).toBe(0);
            } finally {
              bus.stop();
              await store.close();
            }
          },
        ),
        asyncPropertyRuns(200),
      );
    },
    PROPERTY_TEST_TIMEOUT_MS,
  );
});
