import { nowUs, ResetReason, StreamEndReason } from '@app/contracts';
import { StreamEventBus } from './event-bus';
import { StoreResync } from '@app/store/stream-store';
import { ControlledStore, event, flush, RecordingSink, waitFor } from './testing/bus-fixtures';
import { JobPhase, type JobItem } from './testing/fixture-domain';

/**
 * How the bus repairs a feed that lost messages (a shared store's pub/sub is
 * at-most-once): backfill from the store's history on a gap, catch up after a
 * reconnection, and reset explicitly when the store lost its data.
 */
function resetsOf(items: JobItem[]) {
  return items.flatMap((it) => (it.kind === 'reset' ? [it.reset] : []));
}

describe('StoreRepair: the bus repaired from the store', () => {
  let store: ControlledStore;
  let bus: StreamEventBus;
  const publish = (orderId: string, n: number, phase = JobPhase.Building) => {
    for (let i = 0; i < n; i++) store.publishNow(orderId, phase);
  };
  /** Publishes `n` events whose notifications never reach the bus. */
  const publishUnseen = (orderId: string, n: number) => {
    store.lagFeed = true;
    publish(orderId, n);
    store.dropUnannounced();
    store.lagFeed = false;
  };

  beforeEach(() => {
    store = new ControlledStore();
    bus = new StreamEventBus(store);
    bus.start();
  });
  afterEach(() => bus.stop());

  describe('a gap in the feed', () => {
    it('is filled from history before fan-out; live events meanwhile wait in order', async () => {
      publish('o', 2);
      const sink = new RecordingSink();
      await bus.open('o', 2, sink);
      store.holdHistory = true;
      publishUnseen('o', 3); // 3..5 never announced
      publish('o', 1); // 6 arrives: a gap
      publish('o', 2); // 7, 8 arrive while the history read is pending
      expect(store.pendingReads).toHaveLength(1);
      expect(store.pendingReads[0].afterSeq).toBe(2);
      expect(sink.seqs).toEqual([]);
      const read = store.pendingReads[0];
      read.deferred.resolve(store.slice('o', read.afterSeq, read.lastSeqAtCall));
      await waitFor(() => sink.seqs.length === 6, 'the backfilled and held events');
      expect(sink.seqs).toEqual([3, 4, 5, 6, 7, 8]);
      expect(resetsOf(sink.items)).toEqual([]);
      expect(bus.stats.backfills).toBe(1);
      // History already held 6 (it was read after 6 was published); the held copy is a duplicate.
      expect(bus.stats.eventsBackfilled).toBe(4);
      expect(bus.stats.duplicatesIgnored).toBe(1);
      // The ring stayed contiguous: a resume from before the gap is served locally.
      const reads = store.historyReads;
      const late = new RecordingSink();
      await bus.open('o', 1, late);
      expect(late.seqs).toEqual([2, 3, 4, 5, 6, 7, 8]);
      expect(store.historyReads).toBe(reads);
    });

    it('is not backfilled for a job nobody follows here (the ring just restarts)', () => {
      publish('o', 2);
      publishUnseen('o', 3);
      publish('o', 1);
      expect(store.historyReads).toBe(0);
      expect(bus.stats.eventsIngested).toBe(3);
    });

    it('becomes an explicit Gap reset when the history read fails', async () => {
      publish('o', 2);
      const sink = new RecordingSink();
      await bus.open('o', 2, sink);
      store.failReads = true;
      publishUnseen('o', 2);
      publish('o', 2); // 5, 6
      await waitFor(() => sink.items.length === 2, 'the reset and the next event');
      expect(resetsOf(sink.items)).toEqual([expect.objectContaining({ reason: ResetReason.Gap })]);
      expect(resetsOf(sink.items)[0].snapshot.lastSeq).toBe(5);
      expect(sink.seqs).toEqual([6]);
    });
  });

  describe('a store resync', () => {
    it('catch-up: each followed job gets what it missed while disconnected, in order', async () => {
      publish('a', 1);
      publish('b', 1);
      const a = new RecordingSink();
      const b = new RecordingSink();
      await bus.open('a', 1, a);
      await bus.open('b', 1, b);
      publishUnseen('a', 3); // 2..4 missed; b missed nothing
      store.holdHistory = true;
      store.resyncs.next(StoreResync.CatchUp);
      publish('a', 1); // 5 arrives live while the catch-up is still reading
      // Each followed job's history is read from its last delivered seq (to check that
      // the store still has those events): a's carries what it missed, b's nothing new.
      await waitFor(() => store.pendingReads.length === 2, 'the history reads of a and b');
      for (const read of store.pendingReads.splice(0)) {
        read.deferred.resolve(store.slice(read.orderId, read.afterSeq, read.lastSeqAtCall));
      }
      await waitFor(() => a.seqs.length === 4, 'a caught up');
      expect(a.seqs).toEqual([2, 3, 4, 5]);
      expect(b.items).toEqual([]);
      expect(resetsOf(a.items)).toEqual([]);
      expect(bus.stats.storeResyncs).toBe(1);
    });

    it('catch-up: jobs without subscribers are forgotten and read afresh on demand', async () => {
      publish('idle', 2);
      expect(bus.orderCount).toBe(1);
      publishUnseen('idle', 2);
      store.resyncs.next(StoreResync.CatchUp);
      expect(bus.orderCount).toBe(0);
      const sink = new RecordingSink();
      await bus.open('idle', 0, sink);
      expect(sink.seqs).toEqual([1, 2, 3, 4]);
    });

    it('catch-up: a job the store now knows less of than we delivered is reset', async () => {
      publish('o', 4);
      const sink = new RecordingSink();
      await bus.open('o', 4, sink);
      store.wipe();
      publishUnseen('o', 2); // the job was recreated elsewhere: seqs 1, 2
      store.resyncs.next(StoreResync.CatchUp);
      await waitFor(() => sink.items.length === 1, 'the reset');
      const [reset] = resetsOf(sink.items);
      expect(reset.reason).toBe(ResetReason.Gap);
      expect(reset.snapshot.lastSeq).toBe(2);
      publish('o', 1);
      expect(sink.seqs).toEqual([3]);
    });

    it('catch-up: seqs the store handed to other events (a failed-over master lost ours) are reset', async () => {
      publish('o', 4);
      const sink = new RecordingSink();
      await bus.open('o', 4, sink);
      // The new master lacks seqs 3 and 4 as delivered here and gives them to new events:
      // same last seq, different events (only the publish time tells).
      store.wipe();
      publishUnseen('o', 2);
      await new Promise((r) => setTimeout(r, 2));
      publishUnseen('o', 2);
      store.resyncs.next(StoreResync.CatchUp);
      await waitFor(() => sink.items.length === 1, 'the reset');
      const [reset] = resetsOf(sink.items);
      expect(reset.reason).toBe(ResetReason.Gap);
      expect(reset.snapshot.lastSeq).toBe(4);
      publish('o', 1);
      expect(sink.seqs).toEqual([5]);
    });

    it('data lost: every subscriber is reset to the store state, and new seqs flow', async () => {
      publish('o', 5);
      const sink = new RecordingSink();
      await bus.open('o', 5, sink);
      store.wipe();
      store.resyncs.next(StoreResync.DataLost);
      // The job is published anew before the reset is out: its events wait behind it.
      store.publishNow('o', JobPhase.Queued);
      await waitFor(() => sink.items.length === 2, 'the reset and the next event');
      const [reset] = resetsOf(sink.items);
      expect(reset.reason).toBe(ResetReason.Gap);
      expect(reset.snapshot).toMatchObject({ orderId: 'o', lastSeq: 0 });
      expect(sink.seqs).toEqual([1]);
      publish('o', 1);
      expect(sink.seqs).toEqual([1, 2]);
      expect(bus.stats.storeDataLost).toBe(1);
      expect(bus.stats.resets[ResetReason.Gap]).toBe(1);
    });

    it('data lost: the reset carries the state the store has now, and finishes if terminal', async () => {
      publish('o', 3);
      const sink = new RecordingSink();
      await bus.open('o', 3, sink);
      store.wipe();
      publishUnseen('o', 1);
      store.publishNow('o', JobPhase.Done); // seq 2, announced before the resync
      store.resyncs.next(StoreResync.DataLost);
      await waitFor(() => sink.ends.length === 1, 'the stream to complete');
      expect(resetsOf(sink.items)[0].snapshot).toMatchObject({
        lastSeq: 2,
        phase: JobPhase.Done,
      });
      expect(sink.ends).toEqual([StreamEndReason.Completed]);
    });

    it('data lost while a subscriber is still replaying: it is ended to resume afresh', async () => {
      publish('o', 3);
      store.holdHistory = true;
      const sink = new RecordingSink();
      // A one-event ring cannot serve a replay from 0: the open waits on the store.
      bus.stop();
      bus = new StreamEventBus(store, { ringSize: 1 });
      bus.start();
      const opening = bus.open('o', 0, sink);
      await waitFor(() => store.pendingReads.length === 1, 'the replay read');
      store.publishNow('o'); // gives the channel a snapshot through the feed
      store.resyncs.next(StoreResync.DataLost);
      await flush();
      store.pendingReads[0].deferred.resolve(store.slice('o', 0));
      await opening;
      await waitFor(() => sink.ends.length === 1, 'the end');
      expect(sink.ends).toEqual([StreamEndReason.MaxAge]);
      expect(bus.subscriberCount()).toBe(0);
    });

    it('a resync while the store is still down leaves streams up, and a later one repairs', async () => {
      publish('o', 1);
      const sink = new RecordingSink();
      await bus.open('o', 1, sink);
      publishUnseen('o', 2);
      store.failReads = true;
      store.resyncs.next(StoreResync.CatchUp);
      await flush();
      expect(sink.ends).toEqual([]);
      store.failReads = false;
      store.resyncs.next(StoreResync.CatchUp);
      await waitFor(() => sink.seqs.length === 2, 'the catch-up');
      expect(sink.seqs).toEqual([2, 3]);
    });

    it('a resync during a running backfill repairs again: what the feed missed meanwhile arrives', async () => {
      publish('o', 2);
      const sink = new RecordingSink();
      await bus.open('o', 2, sink);
      store.holdHistory = true;
      publishUnseen('o', 1); // 3 missed
      publish('o', 1); // 4 arrives: a gap, the backfill reads history up to 4
      await waitFor(() => store.pendingReads.length === 1, 'the backfill read');
      // The feed drops and comes back while that read is out: 5, 6 are in the store only.
      publishUnseen('o', 2);
      store.resyncs.next(StoreResync.CatchUp);
      store.holdHistory = false;
      const read = store.pendingReads[0];
      read.deferred.resolve(store.slice('o', read.afterSeq, read.lastSeqAtCall));
      // No later live event is needed to reveal 5 and 6 (6 may be the job's last).
      await waitFor(() => sink.seqs.length === 4, 'the backfill and the catch-up');
      expect(sink.seqs).toEqual([3, 4, 5, 6]);
      expect(resetsOf(sink.items)).toEqual([]);
    });

    it('a data loss during a running repair still resets', async () => {
      publish('o', 2);
      const sink = new RecordingSink();
      await bus.open('o', 2, sink);
      store.holdHistory = true;
      publishUnseen('o', 1);
      publish('o', 1); // a gap: the backfill read is out
      await waitFor(() => store.pendingReads.length === 1, 'the backfill read');
      store.wipe();
      store.resyncs.next(StoreResync.DataLost);
      store.resyncs.next(StoreResync.CatchUp); // a later catch-up does not hide the loss
      store.pendingReads[0].deferred.resolve([]);
      await waitFor(() => sink.items.length > 0, 'the reset');
      // First the loss (seqs start over), whatever the events held meanwhile bring next.
      expect(resetsOf(sink.items)[0]).toMatchObject({ reason: ResetReason.Gap });
      expect(resetsOf(sink.items)[0].snapshot).toMatchObject({ lastSeq: 0 });
      expect(bus.stats.storeDataLost).toBe(1);
    });

    it('stop() during a repair leaves nothing behind', async () => {
      publish('o', 1);
      const sink = new RecordingSink();
      await bus.open('o', 1, sink);
      store.holdHistory = true;
      publishUnseen('o', 1);
      store.emitRaw(event('o', 3, JobPhase.Building, nowUs()));
      bus.stop();
      store.pendingReads[0]?.deferred.resolve([]);
      await flush();
      expect(sink.ends).toEqual([StreamEndReason.Shutdown]);
      expect(sink.seqs).toEqual([]);
    });
  });
});
