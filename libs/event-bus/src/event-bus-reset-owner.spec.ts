import { ResetReason } from '@app/contracts';
import { StreamEventBus } from './event-bus';
import { ControlledStore, flush, RecordingSink } from './testing/bus-fixtures';
import { JobPhase } from './testing/fixture-domain';

const OWNER = 'customer-1';

/**
 * A reset's snapshot is the store's read, owner included, whichever path built it: the
 * feed's events do not carry the owner, so a channel folded from them asks the store for
 * it when it builds a reset, once per channel, and never while it delivers.
 */
describe("StreamEventBus: a reset carries the stream's owner", () => {
  let store: ControlledStore;
  let bus: StreamEventBus;

  beforeEach(() => {
    store = new ControlledStore();
    // No store history and a ring of 2: a resume from seq 1 of a longer stream is a reset.
    store.hasHistory = false;
    bus = new StreamEventBus(store, { ringSize: 2, maxStreamAgeMs: 0 });
    bus.start();
  });
  afterEach(() => bus.stop());

  const publish = (count: number) => {
    for (let i = 0; i < count; i++) store.publishNow('o', JobPhase.Building);
  };

  async function resetFrom(afterSeq: number): Promise<unknown> {
    const sink = new RecordingSink();
    const sub = await bus.open('o', afterSeq, sink, { transport: 't' });
    await flush();
    sub.close();
    return sink.resets;
  }

  it("a channel built from the feed's events: the store's snapshot, asked once per channel", async () => {
    store.owners.set('o', OWNER);
    publish(5);
    const stored = await store.getSnapshot('o');
    expect(stored).toMatchObject({ lastSeq: 5, ownerId: OWNER });
    const reset = {
      kind: 'reset',
      reset: { reason: ResetReason.BeyondRetention, snapshot: stored },
    };
    expect(await resetFrom(1)).toEqual([reset]);
    expect(await resetFrom(1)).toEqual([reset]);
    expect(store.ownershipReads).toBe(1);

    // Deliveries read nothing, and the state folds the owner into later snapshots.
    const sink = new RecordingSink();
    await bus.open('o', 5, sink, { transport: 't' });
    publish(3);
    await flush();
    expect(sink.seqs).toEqual([6, 7, 8]);
    expect(store.ownershipReads).toBe(1);
    expect(await bus.getSnapshot('o')).toEqual(await store.getSnapshot('o'));
  });

  it('past the end: the store snapshot, owner included', async () => {
    store.owners.set('o', OWNER);
    publish(2);
    expect(await resetFrom(9)).toEqual([
      {
        kind: 'reset',
        reset: { reason: ResetReason.AheadOfLastSeq, snapshot: await store.getSnapshot('o') },
      },
    ]);
  });

  it('a channel seeded from the store keeps its owner over later events, without asking', async () => {
    store.owners.set('o', OWNER);
    store.lagFeed = true;
    publish(1);
    // The bus has not seen the order: it reads the store's snapshot, owner included.
    const first = new RecordingSink();
    await bus.open('o', 0, first, { transport: 't' });
    store.lagFeed = false;
    store.announce();
    publish(4);
    await flush();
    expect(first.seqs).toEqual([2, 3, 4, 5]);
    expect(await resetFrom(1)).toEqual([
      {
        kind: 'reset',
        reset: { reason: ResetReason.BeyondRetention, snapshot: await store.getSnapshot('o') },
      },
    ]);
    expect(store.ownershipReads).toBe(0);
  });

  it('a stream without an owner: none on the reset, and the store asked once', async () => {
    publish(5);
    const reset = {
      kind: 'reset',
      reset: { reason: ResetReason.BeyondRetention, snapshot: await store.getSnapshot('o') },
    };
    expect(await resetFrom(1)).toEqual([reset]);
    expect(await resetFrom(1)).toEqual([reset]);
    expect(store.ownershipReads).toBe(1);
  });
});
