import { ResetReason } from '@app/contracts';
import { OverflowPolicy } from './bus-options';
import { StreamEventBus } from './event-bus';
import { ControlledStore, flush, RecordingSink } from './testing/bus-fixtures';
import { JobPhase } from './testing/fixture-domain';

const OWNER = 'customer-1';

/**
 * The resets a subscriber builds itself (a live event past its cursor, a queue too small
 * for a skipped marker) carry the stream's whole state, as every other reset does: with
 * two event kinds the newest event alone is not it (a phase change has no progress), and
 * no event carries the owner.
 */
describe("StreamEventBus: a subscriber's own resets carry the whole state", () => {
  let store: ControlledStore;
  let bus: StreamEventBus;

  beforeEach(() => {
    store = new ControlledStore();
    store.owners.set('o', OWNER);
    // No store history: a gap in the feed cannot be backfilled and reaches subscribers.
    store.hasHistory = false;
    bus = new StreamEventBus(store, { maxStreamAgeMs: 0, ringSize: 2 });
    bus.start();
    store.publishNow('o', JobPhase.Queued);
    store.publishNow('o', JobPhase.Building);
    store.publishProgressNow('o');
  });
  afterEach(() => bus.stop());

  /** The store's read, which is what every reset must equal. */
  const stored = async () => {
    const snapshot = await store.getSnapshot('o');
    expect(snapshot).toMatchObject({ percent: 50, ownerId: OWNER });
    return snapshot;
  };

  /** Publishes a phase change whose notification is lost on the way to the bus. */
  const loseOne = (phase: JobPhase) => {
    store.lagFeed = true;
    store.publishNow('o', phase);
    store.dropUnannounced();
    store.lagFeed = false;
  };

  it('a gap in the feed: the reset has the progress and the owner, not just the phase change', async () => {
    const sink = new RecordingSink();
    await bus.open('o', 3, sink, { transport: 't' });
    loseOne(JobPhase.Testing);
    store.publishNow('o', JobPhase.Deploying);
    await flush();
    const snapshot = await stored();
    expect(snapshot).toMatchObject({ phase: JobPhase.Deploying, lastSeq: 5 });
    expect(sink.items).toEqual([{ kind: 'reset', reset: { reason: ResetReason.Gap, snapshot } }]);
    expect(await bus.getSnapshot('o')).toEqual(snapshot);
  });

  it.each([OverflowPolicy.Conflate, OverflowPolicy.DropOldest])(
    'capacity 1 (%s): the folded reset has the progress and the owner',
    async (overflowPolicy) => {
      const sink = new RecordingSink();
      sink.accept = () => false; // full after the first write
      await bus.open('o', 3, sink, { transport: 't', queueCapacity: 1, overflowPolicy });
      store.publishProgressNow('o'); // written, then the sink is full
      store.publishProgressNow('o');
      store.publishNow('o', JobPhase.Testing); // no room for a marker: the queue folds
      sink.accept = () => true;
      sink.fireDrain();
      const snapshot = await stored();
      expect(snapshot).toMatchObject({ phase: JobPhase.Testing, lastSeq: 6 });
      expect(sink.items.slice(1)).toEqual([
        { kind: 'reset', reset: { reason: ResetReason.Overflow, snapshot } },
      ]);
    },
  );

  it.each([OverflowPolicy.Conflate, OverflowPolicy.DropOldest])(
    'capacity 2 (%s): a gap reset and a marker leave no room, the fold keeps the whole state',
    async (overflowPolicy) => {
      const sink = new RecordingSink();
      sink.accept = () => false;
      await bus.open('o', 3, sink, { transport: 't', queueCapacity: 2, overflowPolicy });
      store.publishProgressNow('o'); // seq 4, written, then the sink is full
      loseOne(JobPhase.Testing); // seq 5
      store.publishProgressNow('o'); // seq 6: a gap reset is queued
      store.publishProgressNow('o'); // seq 7: [reset, 7]
      store.publishNow('o', JobPhase.Deploying); // seq 8: [reset, skipped] has no room: fold
      await flush(); // the bus tries to backfill the gap before it passes 6 to 8 on
      sink.accept = () => true;
      sink.fireDrain();
      const snapshot = await stored();
      expect(snapshot).toMatchObject({ phase: JobPhase.Deploying, lastSeq: 8 });
      expect(sink.items.slice(1)).toEqual([
        { kind: 'reset', reset: { reason: ResetReason.Gap, snapshot } },
      ]);
    },
  );

  it('a queue folded while the open still asks for the owner: the reset gains it before it is written', async () => {
    store.hasHistory = true;
    store.holdHistory = true;
    const sink = new RecordingSink();
    // From seq 0 the history is read (the ring does not reach back); the store has not
    // answered on the owner when the next two events fold the parked queue.
    const opening = bus.open('o', 0, sink, { transport: 't', queueCapacity: 1 });
    store.publishProgressNow('o');
    store.publishNow('o', JobPhase.Testing);
    await flush();
    const [read] = store.pendingReads;
    read.deferred.resolve(store.slice('o', read.afterSeq, read.lastSeqAtCall));
    await opening;
    const snapshot = await stored();
    expect(snapshot).toMatchObject({ phase: JobPhase.Testing, lastSeq: 5 });
    expect(sink.seqs).toEqual([1, 2, 3]);
    expect(sink.resets).toEqual([
      { kind: 'reset', reset: { reason: ResetReason.Overflow, snapshot } },
    ]);
  });

  it('a channel the feed reached while the open read the store is seeded from the snapshot', async () => {
    bus.stop();
    // An instance that has not followed the job: the open reads the store's snapshot.
    bus = new StreamEventBus(store, { maxStreamAgeMs: 0, ringSize: 2 });
    const sink = new RecordingSink();
    const opening = bus.open('o', 3, sink, { transport: 't' });
    bus.start();
    store.publishNow('o', JobPhase.Testing); // reaches the channel before the snapshot does
    await opening;
    loseOne(JobPhase.Deploying);
    store.publishNow('o', JobPhase.Done);
    await flush();
    const snapshot = await stored();
    expect(snapshot).toMatchObject({ phase: JobPhase.Done, lastSeq: 6 });
    expect(sink.seqs).toEqual([4]);
    expect(sink.resets).toEqual([{ kind: 'reset', reset: { reason: ResetReason.Gap, snapshot } }]);
    expect(store.ownershipReads).toBe(0);
  });

  it("a snapshot ahead of the feed's first events completes the state once the feed reaches it", async () => {
    bus.stop();
    // A shared store: its answer to the open already has seq 5, its feed has sent only 4.
    bus = new StreamEventBus(store, { maxStreamAgeMs: 0, ringSize: 2 });
    store.lagFeed = true;
    const [testing, again] = [
      store.publishNow('o', JobPhase.Testing),
      store.publishNow('o', JobPhase.Testing),
    ];
    store.dropUnannounced();
    store.lagFeed = false;
    const sink = new RecordingSink();
    sink.accept = () => false; // full after the first write
    const opening = bus.open('o', 3, sink, { transport: 't', queueCapacity: 1 });
    bus.start();
    store.emitRaw(testing);
    await opening;
    store.emitRaw(again); // queued behind seq 4
    store.publishNow('o', JobPhase.Deploying); // no room for a marker: the queue folds
    sink.accept = () => true;
    sink.fireDrain();
    const snapshot = await stored();
    expect(snapshot).toMatchObject({ phase: JobPhase.Deploying, lastSeq: 6 });
    expect(sink.seqs).toEqual([4]);
    expect(sink.resets).toEqual([
      { kind: 'reset', reset: { reason: ResetReason.Overflow, snapshot } },
    ]);
    expect(await bus.getSnapshot('o')).toEqual(snapshot);
    expect(store.ownershipReads).toBe(0);
  });

  it("a resume past retention while the store's snapshot is ahead of the feed: the snapshot is the reset", async () => {
    bus.stop();
    bus = new StreamEventBus(store, { maxStreamAgeMs: 0, ringSize: 2 });
    store.lagFeed = true;
    const [testing, again] = [
      store.publishNow('o', JobPhase.Testing),
      store.publishNow('o', JobPhase.Testing),
    ];
    store.dropUnannounced();
    store.lagFeed = false;
    const sink = new RecordingSink();
    const opening = bus.open('o', 1, sink, { transport: 't' });
    bus.start();
    store.emitRaw(testing);
    await opening;
    store.emitRaw(again); // the feed's copy of what the reset already covers
    const snapshot = await stored();
    expect(snapshot).toMatchObject({ phase: JobPhase.Testing, lastSeq: 5 });
    expect(sink.items).toEqual([
      { kind: 'reset', reset: { reason: ResetReason.BeyondRetention, snapshot } },
    ]);
  });

  it("an open that comes while another reads the store waits for that read, not the feed's state", async () => {
    bus.stop();
    bus = new StreamEventBus(store, { maxStreamAgeMs: 0, ringSize: 2 });
    store.lagFeed = true;
    const testing = store.publishNow('o', JobPhase.Testing);
    store.dropUnannounced();
    store.lagFeed = false;
    store.holdSnapshots = true;
    const [first, second] = [new RecordingSink(), new RecordingSink()];
    const opening = bus.open('o', 4, first, { transport: 't' });
    bus.start();
    store.emitRaw(testing); // the feed's event makes the state known before the read's answer
    // From seq 1 the ring does not reach back and the store keeps no history: a reset.
    const resuming = bus.open('o', 1, second, { transport: 't' });
    await flush();
    store.holdSnapshots = false;
    store.releaseSnapshots();
    await Promise.all([opening, resuming]);
    const snapshot = await stored();
    expect(snapshot).toMatchObject({ phase: JobPhase.Testing, lastSeq: 4 });
    expect(second.items).toEqual([
      { kind: 'reset', reset: { reason: ResetReason.BeyondRetention, snapshot } },
    ]);
  });

  it('the owner is asked once per channel, at the open, never per delivery', async () => {
    const sink = new RecordingSink();
    await bus.open('o', 3, sink, { transport: 't', queueCapacity: 1 });
    for (let i = 0; i < 20; i++) store.publishProgressNow('o');
    await flush();
    expect(store.ownershipReads).toBe(1);
  });
});
