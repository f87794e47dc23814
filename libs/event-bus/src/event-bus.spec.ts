import fc from 'fast-check';
import { filter, type Observable } from 'rxjs';
import {
  cursorAfter,
  ErrorCode,
  GatewayError,
  nowUs,
  ResetReason,
  SkipReason,
  StreamEndReason,
} from '@app/contracts';
import { OverflowPolicy, type EventBusOptions } from './bus-options';
import { StreamEventBus } from './event-bus';
import { StreamState } from './stream-state';
import { Subscriber } from './subscriber';
import { ControlledStore, event, flush, RecordingSink } from './testing/bus-fixtures';
import { JobPhase, type JobEvent, type JobItem } from './testing/fixture-domain';
import { asyncPropertyRuns, PROPERTY_TEST_TIMEOUT_MS } from './testing/property-bounds';

const range = (from: number, to: number) =>
  Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

function resetOf(item: JobItem | undefined) {
  if (item?.kind !== 'reset') throw new Error(`expected a reset, got ${JSON.stringify(item)}`);
  return item.reset;
}

describe('StreamEventBus', () => {
  let store: ControlledStore;
  let bus: StreamEventBus;
  const make = (opts: EventBusOptions = {}) => {
    bus.stop();
    store = new ControlledStore();
    bus = new StreamEventBus(store, opts);
    bus.start();
  };
  const publish = (orderId: string, n: number, phase = JobPhase.Building) => {
    for (let i = 0; i < n; i++) store.publishNow(orderId, phase);
  };

  beforeEach(() => {
    store = new ControlledStore();
    bus = new StreamEventBus(store);
    bus.start();
  });
  afterEach(() => bus.stop());

  describe('fan-out', () => {
    it('calls only the sinks of the order the event belongs to (per-order index)', async () => {
      const others: RecordingSink[] = [];
      for (let o = 0; o < 10; o++) publish(`other-${o}`, 1);
      for (let i = 0; i < 1_000; i++) {
        const sink = new RecordingSink();
        others.push(sink);
        await bus.open(`other-${i % 10}`, 1, sink);
      }
      publish('A', 1);
      const a = new RecordingSink();
      await bus.open('A', 1, a);
      expect(bus.subscriberCount()).toBe(1_001);
      expect(bus.subscriberCount('A')).toBe(1);
      expect(bus.subscriberCount('other-3')).toBe(100);

      const offered = jest.spyOn(Subscriber.prototype, 'offerLive');
      try {
        publish('A', 3);
        // O(subscribers of A): one subscriber was offered each event, not 1,001.
        expect(offered).toHaveBeenCalledTimes(3);
      } finally {
        offered.mockRestore();
      }
      expect(a.seqs).toEqual([2, 3, 4]);
      expect(others.every((s) => s.items.length === 0)).toBe(true);
    });

    it('delivers each order its own events to all of its subscribers', async () => {
      publish('A', 1);
      publish('B', 1);
      const a1 = new RecordingSink();
      const a2 = new RecordingSink();
      const b = new RecordingSink();
      await bus.open('A', 1, a1);
      await bus.open('A', 1, a2);
      await bus.open('B', 1, b);
      publish('A', 2);
      publish('B', 1);
      expect(a1.seqs).toEqual([2, 3]);
      expect(a2.seqs).toEqual([2, 3]);
      expect(b.seqs).toEqual([2]);
      expect(b.items.every((it) => it.kind === 'step' && it.step.orderId === 'B')).toBe(true);
    });
  });

  describe('resume from the ring', () => {
    it('replays events after afterSeq, then goes live with no gap and no duplicate', async () => {
      publish('o', 5);
      const sink = new RecordingSink();
      await bus.open('o', 2, sink);
      expect(sink.seqs).toEqual([3, 4, 5]);
      publish('o', 2);
      expect(sink.seqs).toEqual([3, 4, 5, 6, 7]);
      expect(store.historyReads).toBe(0);
    });

    it(
      'any afterSeq within the ring: exactly the events after it, then live',
      async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 1, max: 30 }),
            fc.nat(40),
            fc.nat(5),
            async (n, after, more) => {
              make({ ringSize: 64 });
              publish('o', n);
              const afterSeq = Math.min(after, n);
              const sink = new RecordingSink();
              await bus.open('o', afterSeq, sink);
              publish('o', more);
              expect(sink.seqs).toEqual(range(afterSeq + 1, n + more));
              expect(sink.resets).toEqual([]);
            },
          ),
          asyncPropertyRuns(),
        );
      },
      PROPERTY_TEST_TIMEOUT_MS,
    );

    it('opens at or behind the newest event without building a snapshot; a reset still has one', async () => {
      // A long-poll opens a subscription for every answer, right after a new event: the
      // open reads the order's seq, and builds the snapshot only for a reset.
      publish('o', 3, JobPhase.Queued);
      const built = jest.spyOn(StreamState.prototype, 'snapshot');
      try {
        const atNewest = new RecordingSink();
        const behind = new RecordingSink();
        await bus.open('o', 3, atNewest);
        await bus.open('o', 1, behind);
        expect(built).not.toHaveBeenCalled();
        expect(behind.seqs).toEqual([2, 3]);
        publish('o', 1, JobPhase.Done);
        expect(atNewest.seqs).toEqual([4]);
        expect(atNewest.ends).toEqual([StreamEndReason.Completed]);

        const ahead = new RecordingSink();
        await bus.open('o', 9, ahead);
        expect(built).toHaveBeenCalled();
        expect(resetOf(ahead.items[0]).snapshot).toMatchObject({ lastSeq: 4, phase: 'done' });
        expect(ahead.ends).toEqual([StreamEndReason.Completed]);
      } finally {
        built.mockRestore();
      }
    });

    it('afterSeq equal to the last seq delivers nothing until the next event', async () => {
      publish('o', 3);
      const sink = new RecordingSink();
      const sub = await bus.open('o', 3, sink);
      expect(sink.items).toEqual([]);
      expect(sub.pending).toBe(0);
      publish('o', 1);
      expect(sink.seqs).toEqual([4]);
    });

    it('reads the store history when the ring does not reach back far enough', async () => {
      make({ ringSize: 3 });
      publish('o', 10);
      const sink = new RecordingSink();
      await bus.open('o', 2, sink);
      expect(store.historyReads).toBe(1);
      expect(sink.seqs).toEqual(range(3, 10));
      expect(bus.stats.eventsReplayed).toBe(8);
    });
  });

  describe('resets', () => {
    it('BeyondRetention with the current snapshot when afterSeq is older than the ring and the store has no history', async () => {
      make({ ringSize: 3 });
      store.hasHistory = false;
      publish('o', 10);
      const sink = new RecordingSink();
      await bus.open('o', 2, sink);
      expect(sink.items).toHaveLength(1);
      const reset = resetOf(sink.items[0]);
      expect(reset.reason).toBe(ResetReason.BeyondRetention);
      expect(reset.snapshot).toMatchObject({ orderId: 'o', lastSeq: 10, phase: JobPhase.Building });
      expect(bus.stats.resets[ResetReason.BeyondRetention]).toBe(1);
      // Continues live from the snapshot.
      publish('o', 1);
      expect(sink.seqs).toEqual([11]);
    });

    it('BeyondRetention for afterSeq 0 once the first events have left the ring', async () => {
      make({ ringSize: 3 });
      store.hasHistory = false;
      publish('o', 4);
      const sink = new RecordingSink();
      await bus.open('o', 0, sink);
      expect(resetOf(sink.items[0]).reason).toBe(ResetReason.BeyondRetention);
    });

    it('BeyondRetention when the store history does not start right after afterSeq', async () => {
      make({ ringSize: 2 });
      publish('o', 8);
      const history = store.history.get('o') ?? [];
      store.history.set('o', history.slice(4)); // the store lost seq 1-4
      const sink = new RecordingSink();
      await bus.open('o', 1, sink);
      expect(resetOf(sink.items[0]).reason).toBe(ResetReason.BeyondRetention);
      expect(sink.items).toHaveLength(1);
    });

    it('AheadOfLastSeq when afterSeq is beyond the last published seq', async () => {
      publish('o', 4);
      const sink = new RecordingSink();
      await bus.open('o', 9, sink);
      const reset = resetOf(sink.items[0]);
      expect(reset.reason).toBe(ResetReason.AheadOfLastSeq);
      expect(reset.snapshot.lastSeq).toBe(4);
      expect(bus.stats.resets[ResetReason.AheadOfLastSeq]).toBe(1);
      publish('o', 1);
      expect(sink.seqs).toEqual([5]);
    });
  });

  describe('unknown orders', () => {
    it('rejects with NotFound and leaves no subscriber behind', async () => {
      const sink = new RecordingSink();
      const err: unknown = await bus
        .open('nope', 0, sink, { transport: 'sse' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).code).toBe(ErrorCode.NotFound);
      expect((err as GatewayError).message).toContain('nope');
      expect(bus.subscriberCount()).toBe(0);
      expect(bus.subscriberCount('nope')).toBe(0);
      expect(bus.orderCount).toBe(0);
      expect(bus.stats.subscriptionsByTransport.get('sse')).toBe(0);
      expect(sink.items).toEqual([]);
      expect(sink.ends).toEqual([]);
    });

    it('finds an order the bus has not seen but the store knows', async () => {
      publish('o', 3);
      const fresh = new StreamEventBus(store, { ringSize: 8 });
      fresh.start();
      try {
        const sink = new RecordingSink();
        await fresh.open('o', 1, sink); // ring empty: served from the store history
        expect(sink.seqs).toEqual([2, 3]);
        publish('o', 1);
        expect(sink.seqs).toEqual([2, 3, 4]);
        expect(await fresh.getSnapshot('o')).toMatchObject({ lastSeq: 4 });
      } finally {
        fresh.stop();
      }
    });

    it('getSnapshot answers from the bus, else from the store, else undefined', async () => {
      publish('o', 2);
      expect(await bus.getSnapshot('o')).toMatchObject({ orderId: 'o', lastSeq: 2 });
      expect(await bus.getSnapshot('nope')).toBeUndefined();
    });
  });

  describe('completion', () => {
    it('delivers the terminal event, then ends with completed and releases', async () => {
      publish('o', 1, JobPhase.Queued);
      const sink = new RecordingSink();
      await bus.open('o', 1, sink);
      publish('o', 1, JobPhase.Building);
      expect(sink.ends).toEqual([]);
      publish('o', 1, JobPhase.Done);
      expect(sink.seqs).toEqual([2, 3]);
      expect(sink.ends).toEqual([StreamEndReason.Completed]);
      expect(sink.writesAfterEnd).toBe(0);
      expect(bus.subscriberCount('o')).toBe(0);
      expect(bus.subscriberCount()).toBe(0);
    });

    it.each([
      [0, [1, 2, 3]],
      [1, [2, 3]],
      [3, []],
    ])(
      'subscribing after the order finished (afterSeq %i) replays %p then completes',
      async (afterSeq, seqs) => {
        publish('o', 1, JobPhase.Queued);
        publish('o', 1, JobPhase.Building);
        publish('o', 1, JobPhase.Failed);
        const sink = new RecordingSink();
        await bus.open('o', afterSeq, sink);
        expect(sink.seqs).toEqual(seqs);
        expect(sink.ends).toEqual([StreamEndReason.Completed]);
        expect(bus.subscriberCount()).toBe(0);
      },
    );

    it('completes after a reset when the finished order is beyond retention or ahead', async () => {
      make({ ringSize: 2 });
      store.hasHistory = false;
      publish('o', 4);
      publish('o', 1, JobPhase.Done);
      for (const afterSeq of [1, 9]) {
        const sink = new RecordingSink();
        await bus.open('o', afterSeq, sink);
        expect(sink.items).toHaveLength(1);
        expect(resetOf(sink.items[0]).snapshot).toMatchObject({
          phase: JobPhase.Done,
          lastSeq: 5,
        });
        expect(sink.ends).toEqual([StreamEndReason.Completed]);
      }
      expect(bus.subscriberCount()).toBe(0);
    });

    it('completes only after a blocked sink has drained the terminal event', async () => {
      publish('o', 1, JobPhase.Queued);
      const sink = new RecordingSink();
      sink.accept = (_it, i) => i > 0;
      await bus.open('o', 0, sink);
      publish('o', 1, JobPhase.Building);
      publish('o', 1, JobPhase.Done);
      expect(sink.seqs).toEqual([1]);
      expect(sink.ends).toEqual([]);
      expect(bus.subscriberCount('o')).toBe(1);
      sink.fireDrain();
      expect(sink.seqs).toEqual([1, 2, 3]);
      expect(sink.ends).toEqual([StreamEndReason.Completed]);
      expect(bus.subscriberCount('o')).toBe(0);
    });
  });

  describe('back-pressure and overflow', () => {
    async function blockedSubscriber(policy: OverflowPolicy, capacity = 4) {
      make({ queueCapacity: capacity, overflowPolicy: policy });
      publish('o', 1);
      const sink = new RecordingSink();
      sink.accept = () => false; // full after every write until drained
      const sub = await bus.open('o', 0, sink);
      expect(sink.seqs).toEqual([1]);
      expect(sink.waitingForDrain).toBe(true);
      return { sink, sub };
    }

    it.each(Object.values(OverflowPolicy))(
      '%s: a full sink gets nothing until drain, and the queue stays within capacity',
      async (policy) => {
        const { sink, sub } = await blockedSubscriber(policy, 4);
        for (let i = 0; i < 50; i++) {
          publish('o', 1);
          expect(sub.pending).toBeLessThanOrEqual(4);
        }
        expect(sink.seqs).toEqual([1]);
        expect(sink.writesWhileFull).toBe(0);
      },
    );

    it('conflate: after drain the client is told what it skipped, then gets the newest phase', async () => {
      const { sink } = await blockedSubscriber(OverflowPolicy.Conflate, 4);
      publish('o', 19); // seqs 2..20
      publish('o', 1, JobPhase.Testing); // seq 21, the newest phase
      sink.accept = () => true;
      sink.fireDrain();
      // The client's items chain without a silent gap, up to the newest phase.
      let cursor = 0;
      for (const it of sink.items) {
        if (it.kind === 'step') expect(it.step.seq).toBe(cursor + 1);
        if (it.kind === 'skipped') expect(it.skipped.fromSeq).toBe(cursor + 1);
        cursor = cursorAfter(it);
      }
      expect(cursor).toBe(21);
      const last = sink.items[sink.items.length - 1];
      expect(last.kind === 'step' && last.step.phase).toBe(JobPhase.Testing);
      expect(sink.items.some((it) => it.kind === 'skipped')).toBe(true);
      expect(bus.stats.overflows[OverflowPolicy.Conflate]).toBeGreaterThan(0);
      // Every event either reached the sink or was counted as dropped, and signalled.
      const seqs = sink.seqs;
      expect(bus.stats.overflowDropped[OverflowPolicy.Conflate]).toBe(21 - seqs.length);
      expect(bus.stats.skippedByTransport.get('internal')?.conflate).toBe(21 - seqs.length);
    });

    it('drop-oldest: after drain the client is told what was dropped, then gets the newest events', async () => {
      const { sink } = await blockedSubscriber(OverflowPolicy.DropOldest, 4);
      publish('o', 19); // seqs 2..20
      sink.accept = () => true;
      sink.fireDrain();
      // The marker takes one of the 4 slots: 3 events follow it.
      expect(sink.items).toMatchObject([
        { kind: 'step', step: { seq: 1 } },
        { kind: 'skipped', skipped: { fromSeq: 2, toSeq: 17, reason: SkipReason.Overflow } },
        { kind: 'step', step: { seq: 18 } },
        { kind: 'step', step: { seq: 19 } },
        { kind: 'step', step: { seq: 20 } },
      ]);
      expect(bus.stats.overflows[OverflowPolicy.DropOldest]).toBe(15);
      expect(bus.stats.overflowDropped[OverflowPolicy.DropOldest]).toBe(16);
      expect(bus.stats.skippedByTransport.get('internal')?.['drop-oldest']).toBe(16);
    });

    it('disconnect: the subscription ends with overflow, counted, and is released', async () => {
      const { sink, sub } = await blockedSubscriber(OverflowPolicy.Disconnect, 4);
      publish('o', 4); // fills the queue
      expect(sink.ends).toEqual([]);
      publish('o', 1); // one too many
      expect(sink.ends).toEqual([StreamEndReason.Overflow]);
      expect(bus.stats.overflows[OverflowPolicy.Disconnect]).toBe(1);
      expect(bus.stats.overflowDropped[OverflowPolicy.Disconnect]).toBe(4);
      expect(bus.subscriberCount()).toBe(0);
      publish('o', 3);
      expect(sink.fireDrain()).toBe(true); // a late drain must not write
      expect(sink.seqs).toEqual([1]);
      expect(sink.writesAfterEnd).toBe(0);
      sub.close(); // idempotent after the bus ended it
      expect(bus.subscriberCount()).toBe(0);
    });

    it.each([OverflowPolicy.Conflate, OverflowPolicy.DropOldest])(
      '%s: gaps while the sink is full keep the queue bounded and still end in a reset',
      async (policy) => {
        const { sink, sub } = await blockedSubscriber(policy, 1);
        for (const seq of [4, 5, 9, 10, 11, 20]) {
          store.emitRaw(event('o', seq, JobPhase.Deploying, nowUs()));
          expect(sub.pending).toBeLessThanOrEqual(1);
        }
        // The gap first asks the store's history (which has none of these); then the
        // held events go out as resets.
        await flush();
        expect(sub.pending).toBeLessThanOrEqual(1);
        sink.accept = () => true;
        sink.fireDrain();
        expect(sink.items).toHaveLength(2);
        expect(resetOf(sink.items[1]).snapshot.lastSeq).toBe(20);
        expect(bus.stats.overflowDropped[policy]).toBeGreaterThan(0);
      },
    );

    it('per-subscription options override the bus defaults', async () => {
      make({ queueCapacity: 2, overflowPolicy: OverflowPolicy.Disconnect });
      publish('o', 1);
      const sink = new RecordingSink();
      sink.accept = () => false;
      const sub = await bus.open('o', 0, sink, {
        queueCapacity: 10,
        overflowPolicy: OverflowPolicy.DropOldest,
      });
      publish('o', 12);
      expect(sink.ends).toEqual([]);
      expect(sub.pending).toBe(10);
      expect(bus.stats.overflows[OverflowPolicy.DropOldest]).toBe(2);
    });

    it('one slow sink never blocks a fast sink on the same order', async () => {
      make({ queueCapacity: 4, overflowPolicy: OverflowPolicy.Conflate });
      publish('o', 1);
      const slow = new RecordingSink();
      slow.accept = () => false;
      const fast = new RecordingSink();
      await bus.open('o', 0, slow);
      await bus.open('o', 0, fast);
      publish('o', 99);
      expect(fast.seqs).toEqual(range(1, 100));
      expect(slow.seqs).toEqual([1]);
    });

    it('resumes pumping from the drain callback and stops again when full', async () => {
      publish('o', 1);
      const sink = new RecordingSink();
      // Full after seq 1, and again after seq 3.
      sink.accept = (it) => it.kind === 'step' && it.step.seq !== 1 && it.step.seq !== 3;
      await bus.open('o', 0, sink, { queueCapacity: 100 });
      publish('o', 5);
      expect(sink.seqs).toEqual([1]);
      sink.fireDrain();
      expect(sink.seqs).toEqual([1, 2, 3]);
      sink.fireDrain();
      expect(sink.seqs).toEqual(range(1, 6));
      expect(sink.writesWhileFull).toBe(0);
    });
  });

  describe('subscriber counts and stats', () => {
    it('counts per order, per transport and in total, and return to 0 after close()', async () => {
      publish('A', 1);
      publish('B', 1);
      const subs = [
        await bus.open('A', 0, new RecordingSink(), { transport: 'sse' }),
        await bus.open('A', 0, new RecordingSink(), { transport: 'grpc' }),
        await bus.open('B', 0, new RecordingSink(), { transport: 'sse' }),
        await bus.open('B', 0, new RecordingSink()),
      ];
      expect(bus.subscriberCount()).toBe(4);
      expect(bus.subscriberCount('A')).toBe(2);
      expect(bus.subscriberCount('B')).toBe(2);
      expect(bus.stats.subscriptionsByTransport.get('sse')).toBe(2);
      expect(bus.stats.subscriptionsByTransport.get('grpc')).toBe(1);
      expect(bus.stats.subscriptionsByTransport.get('internal')).toBe(1);
      for (const s of subs) {
        s.close();
        s.close(); // idempotent
      }
      expect(bus.subscriberCount()).toBe(0);
      expect(bus.subscriberCount('A')).toBe(0);
      expect(bus.subscriberCount('B')).toBe(0);
      expect([...bus.stats.subscriptionsByTransport.values()]).toEqual([0, 0, 0]);
    });

    it('a closed subscription is never written to again', async () => {
      publish('o', 1);
      const sink = new RecordingSink();
      const sub = await bus.open('o', 0, sink);
      sub.close();
      publish('o', 3);
      expect(sink.seqs).toEqual([1]);
      expect(sink.ends).toEqual([]);
    });

    it('moves the counters as events flow', async () => {
      publish('o', 3);
      const a = new RecordingSink();
      const b = new RecordingSink();
      await bus.open('o', 1, a, { transport: 'grpc' }); // a resume: replays 2, 3
      await bus.open('o', 0, b, { transport: 'ws' }); // replays 1, 2, 3
      publish('o', 2);
      expect(bus.stats.eventsIngested).toBe(5);
      expect(bus.stats.resumes).toBe(1);
      expect(bus.stats.eventsReplayed).toBe(5);
      expect(bus.stats.itemsDelivered).toBe(4 + 5);
      expect(bus.stats.deliveredByTransport.get('grpc')).toBe(4);
      expect(bus.stats.deliveredByTransport.get('ws')).toBe(5);
    });

    it('stop() ends every subscription with shutdown and stops ingesting', async () => {
      publish('A', 1);
      publish('B', 1);
      const sinks = [new RecordingSink(), new RecordingSink(), new RecordingSink()];
      await bus.open('A', 1, sinks[0]);
      await bus.open('A', 1, sinks[1]);
      await bus.open('B', 1, sinks[2]);
      bus.stop();
      expect(sinks.map((s) => s.ends)).toEqual([['shutdown'], ['shutdown'], ['shutdown']]);
      expect(bus.subscriberCount()).toBe(0);
      expect(bus.orderCount).toBe(0);
      publish('A', 1);
      expect(bus.stats.eventsIngested).toBe(2);
    });

    it('start() is idempotent: events are ingested once', () => {
      bus.start();
      bus.start();
      publish('o', 2);
      expect(bus.stats.eventsIngested).toBe(2);
      expect(bus.stats.duplicatesIgnored).toBe(0);
    });
  });

  describe('what the store feeds', () => {
    it('ignores duplicate events and counts them', async () => {
      publish('o', 3);
      const sink = new RecordingSink();
      await bus.open('o', 0, sink);
      store.emitRaw(event('o', 2, JobPhase.Building, nowUs()));
      store.emitRaw(event('o', 3, JobPhase.Building, nowUs()));
      publish('o', 1);
      expect(sink.seqs).toEqual([1, 2, 3, 4]);
      expect(bus.stats.duplicatesIgnored).toBe(2);
      expect(bus.stats.eventsIngested).toBe(4);
    });

    it('turns a gap in the seqs into a Gap reset for live subscribers', async () => {
      store.hasHistory = false;
      publish('o', 3);
      const sink = new RecordingSink();
      await bus.open('o', 3, sink);
      store.emitRaw(event('o', 7, JobPhase.Deploying, nowUs()));
      store.emitRaw(event('o', 8, JobPhase.Deploying, nowUs()));
      await flush(); // the backfill attempt finds no history
      expect(sink.items).toHaveLength(2);
      const reset = resetOf(sink.items[0]);
      expect(reset.reason).toBe(ResetReason.Gap);
      expect(reset.snapshot).toMatchObject({ orderId: 'o', lastSeq: 7, phase: 'deploying' });
      expect(sink.seqs).toEqual([8]);
      expect(bus.stats.resets[ResetReason.Gap]).toBe(1);
      // The ring restarted after the gap: a resume from before it is told so.
      const late = new RecordingSink();
      await bus.open('o', 4, late);
      expect(resetOf(late.items[0]).reason).toBe(ResetReason.BeyondRetention);
      const fromGap = new RecordingSink();
      await bus.open('o', 6, fromGap);
      expect(fromGap.seqs).toEqual([7, 8]);
    });

    it('completes when a gap lands on a terminal phase', async () => {
      publish('o', 2);
      const sink = new RecordingSink();
      await bus.open('o', 2, sink);
      store.emitRaw(event('o', 5, JobPhase.Done, nowUs()));
      await flush(); // the backfill attempt finds no history
      expect(resetOf(sink.items[0]).snapshot.phase).toBe(JobPhase.Done);
      expect(sink.ends).toEqual([StreamEndReason.Completed]);
    });
  });

  describe('eviction of idle channels', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('forgets an order nobody follows channelIdleMs after it was last seen', () => {
      make({ channelIdleMs: 1_000 });
      publish('o', 1, JobPhase.Queued);
      jest.advanceTimersByTime(500);
      publish('other', 1, JobPhase.Queued);
      expect(bus.orderCount).toBe(2);
      jest.advanceTimersByTime(500);
      expect(bus.orderCount).toBe(1);
      jest.advanceTimersByTime(500);
      expect(bus.orderCount).toBe(0);
    });

    it('keeps a channel while it has subscribers, and channelIdleMs after the last left', async () => {
      make({ channelIdleMs: 1_000 });
      publish('o', 1, JobPhase.Queued);
      const sink = new RecordingSink();
      sink.accept = () => false; // still draining: in use all the same
      const sub = await bus.open('o', 0, sink);
      jest.advanceTimersByTime(5_000);
      expect(bus.orderCount).toBe(1);
      sub.close();
      jest.advanceTimersByTime(999);
      expect(bus.orderCount).toBe(1);
      // A reconnect within the linger finds the channel warm and stops the eviction.
      const again = await bus.open('o', 1, new RecordingSink());
      jest.advanceTimersByTime(5_000);
      expect(bus.orderCount).toBe(1);
      again.close();
      jest.advanceTimersByTime(1_000);
      expect(bus.orderCount).toBe(0);
    });

    it('a routing store: watched on the first subscriber, unwatched after the linger, other orders never kept', async () => {
      bus.stop();
      const routing = new RoutingStore();
      store = routing;
      bus = new StreamEventBus(routing, { channelIdleMs: 1_000 });
      bus.start();
      routing.publishNow('o', JobPhase.Queued);
      routing.publishNow('elsewhere', JobPhase.Queued);
      expect(bus.orderCount).toBe(0);
      const [a, b] = [new RecordingSink(), new RecordingSink()];
      const subs = await Promise.all([bus.open('o', 0, a), bus.open('o', 0, b)]);
      expect(routing.calls).toEqual(['watch o']);
      routing.publishNow('o', JobPhase.Building);
      expect(a.seqs).toEqual([1, 2]);
      for (const sub of subs) sub.close();
      jest.advanceTimersByTime(1_000);
      expect(routing.calls).toEqual(['watch o', 'unwatch o']);
      expect(bus.orderCount).toBe(0);
    });

    it('a routing store that cannot subscribe: the open fails and nothing stays behind', async () => {
      bus.stop();
      const routing = new RoutingStore();
      routing.failWatch = true;
      store = routing;
      bus = new StreamEventBus(routing, { channelIdleMs: 1_000 });
      bus.start();
      routing.publishNow('o', JobPhase.Queued);
      await expect(bus.open('o', 0, new RecordingSink())).rejects.toBeInstanceOf(GatewayError);
      expect(bus.subscriberCount()).toBe(0);
      expect(bus.orderCount).toBe(0);
      expect(routing.calls).toEqual(['watch o', 'unwatch o']);
    });
  });
});

/** A store that routes like the Redis store: only watched orders reach the bus. */
class RoutingStore extends ControlledStore {
  readonly calls: string[] = [];
  failWatch = false;
  private readonly watched = new Set<string>();
  // Field initializers run after ControlledStore's: this.events$ is still its feed here.
  readonly events$: Observable<JobEvent> = this.onlyWatched();

  private onlyWatched(): Observable<JobEvent> {
    return this.events$.pipe(filter((e) => this.watched.has(e.orderId)));
  }

  async watch(orderId: string): Promise<void> {
    this.calls.push(`watch ${orderId}`);
    await Promise.resolve();
    if (this.failWatch) throw new GatewayError(ErrorCode.Unavailable, 'feed is down');
    this.watched.add(orderId);
  }

  unwatch(orderId: string): void {
    this.calls.push(`unwatch ${orderId}`);
    this.watched.delete(orderId);
  }
}

describe('the replay/live race', () => {
  // The example-based cases share one store and bus; the property below makes its own
  // per run.
  let store: ControlledStore;
  let bus: StreamEventBus;
  beforeEach(() => {
    store = new ControlledStore();
    bus = new StreamEventBus(store, { ringSize: 2 });
    bus.start();
  });
  afterEach(() => bus.stop());

  it('slow history, live events meanwhile: the subscriber still sees every seq once, in order', async () => {
    for (let i = 0; i < 10; i++) store.publishNow('o');
    store.holdHistory = true;
    const sink = new RecordingSink();
    const opening = bus.open('o', 3, sink);
    expect(store.pendingReads).toHaveLength(1); // the ring (9, 10) does not cover 4..
    for (let i = 0; i < 5; i++) store.publishNow('o'); // 11..15 while history is pending
    expect(sink.items).toEqual([]);
    const read = store.pendingReads[0];
    read.deferred.resolve(store.slice('o', 3, read.lastSeqAtCall)); // history as of the call: 4..10
    await opening;
    store.publishNow('o');
    expect(sink.seqs).toEqual(range(4, 16));
    expect(bus.stats.eventsReplayed).toBe(7);
  });

  it('history lost while the order finishes: a reset with the final state, then completed', async () => {
    for (let i = 0; i < 6; i++) store.publishNow('o');
    store.holdHistory = true;
    const sink = new RecordingSink();
    const opening = bus.open('o', 1, sink);
    store.publishNow('o', JobPhase.Done); // seq 7, while the history read is pending
    store.pendingReads[0].deferred.resolve(undefined);
    await opening;
    expect(sink.items).toHaveLength(1);
    expect(resetOf(sink.items[0]).snapshot).toMatchObject({
      lastSeq: 7,
      phase: JobPhase.Done,
    });
    expect(sink.ends).toEqual([StreamEndReason.Completed]);
    expect(bus.subscriberCount()).toBe(0);
  });

  it('a failed history read rejects the open and leaves no subscriber behind', async () => {
    for (let i = 0; i < 6; i++) store.publishNow('o');
    store.holdHistory = true;
    const opening = bus.open('o', 1, new RecordingSink());
    store.publishNow('o');
    store.pendingReads[0].deferred.reject(new GatewayError(ErrorCode.Unavailable, 'down'));
    await expect(opening).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    expect(bus.subscriberCount()).toBe(0);
  });

  it('completes when the replay from history ends with a terminal event the feed has not delivered yet', async () => {
    // Found by the property below (seed 1407742172): the feed's late copy of the terminal
    // event is a duplicate and skipped, so the replay alone must finish the stream.
    for (let i = 0; i < 3; i++) store.publishNow('o');
    store.holdHistory = true;
    store.lagFeed = true;
    const sink = new RecordingSink();
    const opening = bus.open('o', 0, sink);
    store.publishNow('o', JobPhase.Done);
    const read = store.pendingReads.shift();
    read?.deferred.resolve(store.slice('o', read.afterSeq, store.lastSeq('o')));
    await opening;
    expect(sink.seqs).toEqual([1, 2, 3, 4]);
    expect(sink.ends).toEqual([StreamEndReason.Completed]);
    store.announce();
    await flush();
    expect(sink.seqs).toEqual([1, 2, 3, 4]);
    expect(sink.ends).toEqual([StreamEndReason.Completed]);
    expect(bus.subscriberCount()).toBe(0);
  });

  type Op = 'publish' | 'flush' | 'block' | 'drain' | 'announce';
  it(
    'any interleaving of live events, drains and the history answer: every seq exactly once, in order',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            initial: fc.integer({ min: 3, max: 12 }),
            back: fc.integer({ min: 3, max: 14 }),
            ops: fc.array(
              fc.constantFrom<Op>('publish', 'publish', 'flush', 'block', 'drain', 'announce'),
              { maxLength: 25 },
            ),
            // The store's notifications may lag its history (a shared store): the history
            // answer can then hold events the bus has not seen yet.
            lag: fc.boolean(),
            resolveAt: fc.nat(),
            // Where the history answer is cut: as the store stood at the call (0), at the
            // answer (1), or in between.
            cut: fc.double({ min: 0, max: 1, noNaN: true }),
            terminal: fc.boolean(),
            policy: fc.constantFrom(...Object.values(OverflowPolicy)),
          }),
          async ({ initial, back, ops, resolveAt, cut, terminal, policy, lag }) => {
            const store = new ControlledStore();
            const bus = new StreamEventBus(store, {
              ringSize: 2,
              queueCapacity: 1_000,
              overflowPolicy: policy,
            });
            bus.start();
            try {
              for (let i = 0; i < initial; i++) store.publishNow('o');
              const afterSeq = Math.max(0, initial - back);
              store.holdHistory = true;
              store.lagFeed = lag;
              const sink = new RecordingSink();
              let blockNext = false;
              sink.accept = () => {
                if (!blockNext) return true;
                blockNext = false;
                return false;
              };
              const opening = bus.open('o', afterSeq, sink, { transport: 'race' });
              expect(store.pendingReads).toHaveLength(1);
              const resolve = () => {
                const read = store.pendingReads.shift();
                if (!read) return;
                const upTo =
                  read.lastSeqAtCall + Math.floor(cut * (store.lastSeq('o') - read.lastSeqAtCall));
                read.deferred.resolve(store.slice('o', read.afterSeq, upTo));
              };
              const publishes = ops.filter((op) => op === 'publish').length;
              let published = 0;
              const at = resolveAt % (ops.length + 1);
              for (let i = 0; i < ops.length; i++) {
                if (i === at) resolve();
                switch (ops[i]) {
                  case 'publish':
                    published++;
                    store.publishNow(
                      'o',
                      terminal && published === publishes ? JobPhase.Done : JobPhase.Building,
                    );
                    break;
                  case 'flush':
                    await flush();
                    break;
                  case 'block':
                    blockNext = true;
                    break;
                  case 'drain':
                    sink.fireDrain();
                    break;
                  case 'announce':
                    store.announce();
                    break;
                }
              }
              resolve();
              const sub = await opening;
              store.announce();
              blockNext = false;
              while (sink.fireDrain());

              expect(sink.resets).toEqual([]);
              expect(sink.seqs).toEqual(range(afterSeq + 1, store.lastSeq('o')));
              expect(sink.writesWhileFull).toBe(0);
              expect(sink.writesAfterEnd).toBe(0);
              const finished = terminal && publishes > 0;
              expect(sink.ends).toEqual(finished ? [StreamEndReason.Completed] : []);
              expect(bus.subscriberCount()).toBe(finished ? 0 : 1);
              sub.close();
              expect(bus.subscriberCount()).toBe(0);
              expect(bus.stats.subscriptionsByTransport.get('race')).toBe(0);
            } finally {
              bus.stop();
            }
          },
        ),
        asyncPropertyRuns(300),
      );
    },
    PROPERTY_TEST_TIMEOUT_MS,
  );
});
