import { cursorAfter, ResetReason, StreamEndReason } from '@app/contracts';
import { BoundedQueue } from './bounded-queue';
import { OverflowPolicy } from './bus-options';
import { StreamEventBus } from './event-bus';
import { StreamState } from './stream-state';
import {
  event,
  flush,
  inMemoryJobStore,
  progressEvent,
  RecordingSink,
} from './testing/bus-fixtures';
import {
  JOB_DOMAIN,
  jobAfter,
  jobItem,
  JobPhase,
  publishPhaseSync,
  publishProgressSync,
  type JobEvent,
  type JobItem,
} from './testing/fixture-domain';

/**
 * The bus with the in-memory store: the store enforces the life cycle, as in production.
 * A job's progress reports are the second event kind, sharing the stream's seqs with its
 * phase changes.
 */
function setup(opts: { queueCapacity?: number; overflowPolicy?: OverflowPolicy } = {}) {
  const store = inMemoryJobStore();
  const bus = new StreamEventBus(store, opts);
  bus.start();
  const build = (orderId: string) => {
    publishPhaseSync(store, orderId, JobPhase.Queued);
    publishPhaseSync(store, orderId, JobPhase.Building);
  };
  const report = (orderId: string, percent = 10) => publishProgressSync(store, orderId, percent);
  return { store, bus, build, report };
}

/**
 * A queue alone, reading the state it folds into from a job state that the spec applies
 * each offered event to first, as the bus does with its channel's state.
 */
function queueOverState(capacity: number, policy: OverflowPolicy, ownerId?: string) {
  const state = new StreamState(JOB_DOMAIN, undefined, ownerId);
  const q = new BoundedQueue(capacity, policy, JOB_DOMAIN, {
    stateAt: (e) => state.snapshot() ?? jobAfter(undefined, e),
  });
  const offer = (e: JobEvent) => {
    state.apply(e);
    return q.offer(jobItem(e));
  };
  return { q, offer };
}

const kinds = (items: readonly JobItem[]) => items.map((it) => `${it.kind}@${cursorAfter(it)}`);

describe('a second event kind on the bus (progress reports)', () => {
  it('delivers progress items in seq order with phase changes, live and on resume', async () => {
    const { store, bus, build, report } = setup();
    try {
      build('o');
      const live = new RecordingSink();
      await bus.open('o', 0, live);
      report('o');
      publishPhaseSync(store, 'o', JobPhase.Testing);
      report('o', 20);
      publishPhaseSync(store, 'o', JobPhase.Done);
      const expected = ['step@1', 'step@2', 'progress@3', 'step@4', 'progress@5', 'step@6'];
      expect(kinds(live.items)).toEqual(expected);
      expect(live.ends).toEqual([StreamEndReason.Completed]);
      // A resume in the middle replays both kinds from the ring.
      const resumed = new RecordingSink();
      await bus.open('o', 2, resumed);
      expect(kinds(resumed.items)).toEqual(expected.slice(2));
      expect(resumed.items[0]).toMatchObject({
        kind: 'progress',
        progress: { phase: JobPhase.Building, percent: 10 },
      });
      // The bus's snapshot counts progress seqs and keeps the newest progress.
      expect(await bus.getSnapshot('o')).toMatchObject({
        phase: JobPhase.Done,
        lastSeq: 6,
        percent: 20,
      });
    } finally {
      bus.stop();
      await store.close();
    }
  });

  it('a progress report never completes a stream', async () => {
    const { store, bus, build, report } = setup();
    try {
      build('o');
      const sink = new RecordingSink();
      await bus.open('o', 0, sink);
      for (let i = 0; i < 5; i++) report('o');
      await flush();
      expect(sink.ends).toEqual([]);
      expect(sink.seqs).toEqual([1, 2, 3, 4, 5, 6, 7]);
    } finally {
      bus.stop();
      await store.close();
    }
  });

  it('conflation replaces queued phase changes and progress alike; the newest item still tells the phase', () => {
    const { q, offer } = queueOverState(3, OverflowPolicy.Conflate);
    offer(event('o', 1, JobPhase.Building));
    offer(progressEvent('o', 2));
    offer(event('o', 3, JobPhase.Testing));
    const newest = progressEvent('o', 4, JobPhase.Testing);
    expect(offer(newest)).toEqual({
      accepted: true,
      dropped: 3,
    });
    const items = [q.shift(), q.shift()] as JobItem[];
    expect(items).toEqual([
      { kind: 'skipped', skipped: { fromSeq: 1, toSeq: 3, reason: 'overflow' } },
      { kind: 'progress', progress: newest },
    ]);
    // The client learns the phase it missed from the progress report itself.
    expect(items[1]?.kind === 'progress' && items[1].progress.phase).toBe(JobPhase.Testing);
  });

  it("a queue too small for a marker folds into a reset with the stream's state: both kinds and the owner", () => {
    const { q, offer } = queueOverState(1, OverflowPolicy.DropOldest, 'customer-1');
    offer(event('o', 1, JobPhase.Building));
    offer(progressEvent('o', 2, JobPhase.Building, 77, 40));
    // The newest event is a phase change, which alone says nothing of the progress.
    offer(event('o', 3, JobPhase.Testing, 88));
    expect(q.length).toBe(1);
    expect(q.shift()).toEqual({
      kind: 'reset',
      reset: {
        reason: ResetReason.Overflow,
        snapshot: {
          orderId: 'o',
          phase: JobPhase.Testing,
          lastSeq: 3,
          updatedAtUs: 88,
          percent: 40,
          ownerId: 'customer-1',
        },
      },
    });
  });

  it('slow subscriber under conflate: skipped range, then the newest progress report', async () => {
    const { store, bus, build, report } = setup({ queueCapacity: 2 });
    try {
      build('o');
      const sink = new RecordingSink();
      sink.accept = () => false; // full after the first write
      await bus.open('o', 2, sink);
      for (let i = 0; i < 10; i++) report('o', 10 + i);
      sink.accept = () => true;
      sink.fireDrain();
      expect(kinds(sink.items)).toEqual(['progress@3', 'skipped@11', 'progress@12']);
      expect(sink.items.at(-1)).toMatchObject({ progress: { percent: 19 } });
    } finally {
      bus.stop();
      await store.close();
    }
  });
});
