import { ResetReason } from '@app/contracts';
import { StreamEventBus } from './event-bus';
import {
  flush,
  inMemoryJobStore,
  RecordingSink,
  type InMemoryJobStore,
} from './testing/bus-fixtures';
import {
  JOB_DOMAIN,
  JobPhase,
  publishPhaseSync,
  publishProgressSync,
} from './testing/fixture-domain';

const OWNER = 'customer-1';

/**
 * With the in-memory store the bus keeps a channel for an order nobody follows only for
 * `channelIdleMs`; a later event makes it again. That event alone is not the stream's
 * state (a phase change has no progress, no event has the owner), so a reset built from
 * the recreated channel must still equal the store's read.
 */
describe('StreamEventBus: a channel recreated after its eviction', () => {
  let store: InMemoryJobStore;
  let bus: StreamEventBus;

  beforeEach(async () => {
    // A store history of 2: a resume from the job's start is past its retention.
    store = inMemoryJobStore({ historySize: 2 });
    bus = new StreamEventBus(store, { maxStreamAgeMs: 0, channelIdleMs: 0 });
    bus.start();
    const queued = { orderId: 'o', phase: JobPhase.Queued };
    store.appendSync(queued, JOB_DOMAIN.append!.rule(queued), { ownerId: OWNER });
    publishPhaseSync(store, 'o', JobPhase.Building);
    publishProgressSync(store, 'o', 50);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(bus.orderCount).toBe(0);
    publishPhaseSync(store, 'o', JobPhase.Testing); // seq 4: the channel is made again
    expect(bus.orderCount).toBe(1);
  });
  afterEach(() => {
    bus.stop();
    void store.close();
  });

  /** The store's read, which is what every reset must equal. */
  const stored = async () => {
    const snapshot = await store.getSnapshot('o');
    expect(snapshot).toMatchObject({ percent: 50, ownerId: OWNER });
    return snapshot;
  };

  it('a queue folded at capacity 1: the reset has the progress and the owner', async () => {
    const sink = new RecordingSink();
    sink.accept = () => false; // full after the first write
    await bus.open('o', 3, sink, { transport: 't', queueCapacity: 1 });
    publishPhaseSync(store, 'o', JobPhase.Deploying); // queued behind seq 4
    publishPhaseSync(store, 'o', JobPhase.Done); // no room for a marker: the queue folds
    sink.accept = () => true;
    sink.fireDrain();
    await flush();
    const snapshot = await stored();
    expect(snapshot).toMatchObject({ phase: JobPhase.Done, lastSeq: 6 });
    expect(sink.seqs).toEqual([4]);
    expect(sink.resets).toEqual([
      { kind: 'reset', reset: { reason: ResetReason.Overflow, snapshot } },
    ]);
  });

  it('a resume past retention: the reset has the progress and the owner', async () => {
    const sink = new RecordingSink();
    await bus.open('o', 1, sink, { transport: 't' });
    await flush();
    const snapshot = await stored();
    expect(snapshot).toMatchObject({ phase: JobPhase.Testing, lastSeq: 4 });
    expect(sink.items).toEqual([
      { kind: 'reset', reset: { reason: ResetReason.BeyondRetention, snapshot } },
    ]);
  });

  it("the bus's snapshot is the store's", async () => {
    expect(await bus.getSnapshot('o')).toEqual(await stored());
  });
});
