import { ResetReason, StreamEndReason } from '@app/contracts';
import { StreamEventBus } from './event-bus';
import { ControlledStore, flush, RecordingSink } from './testing/bus-fixtures';
import { JobPhase } from './testing/fixture-domain';

/**
 * A client resumes here from a seq it saw on another instance whose feed is ahead of
 * this one's: the store, not this instance's feed, decides whether that seq exists.
 */
describe('StreamEventBus: resume ahead of this instance feed', () => {
  let store: ControlledStore;
  let bus: StreamEventBus;

  beforeEach(() => {
    store = new ControlledStore();
    bus = new StreamEventBus(store, { maxStreamAgeMs: 0 });
    bus.start();
  });
  afterEach(() => bus.stop());

  /** seq 1 reached this feed; `more` are in the store but not announced yet. */
  async function lagging(...more: JobPhase[]): Promise<void> {
    store.publishNow('o', JobPhase.Queued);
    await bus.open('o', 0, new RecordingSink(), { transport: 't' });
    store.lagFeed = true;
    for (const phase of more) store.publishNow('o', phase);
  }

  it('resuming at the store last seq: no reset, then the live events after it, once', async () => {
    await lagging(JobPhase.Building, JobPhase.Testing);
    const sink = new RecordingSink();
    await bus.open('o', 3, sink, { transport: 't' });
    store.lagFeed = false;
    store.announce();
    store.publishNow('o', JobPhase.Deploying);
    await flush();
    expect(sink.resets).toEqual([]);
    expect(sink.seqs).toEqual([4]);
  });

  it('resuming behind the store last seq reads the store history, without duplicates', async () => {
    await lagging(JobPhase.Building, JobPhase.Testing);
    const sink = new RecordingSink();
    await bus.open('o', 2, sink, { transport: 't' });
    store.lagFeed = false;
    store.announce();
    await flush();
    expect(sink.resets).toEqual([]);
    expect(sink.seqs).toEqual([3]);
  });

  it('resuming at a terminal event the feed has not delivered completes the stream', async () => {
    await lagging(JobPhase.Building, JobPhase.Done);
    const sink = new RecordingSink();
    await bus.open('o', 3, sink, { transport: 't' });
    await flush();
    expect(sink.items).toEqual([]);
    expect(sink.ends).toEqual([StreamEndReason.Completed]);
  });

  it('a seq the store has not reached either is still a reset', async () => {
    await lagging(JobPhase.Building);
    const sink = new RecordingSink();
    await bus.open('o', 9, sink, { transport: 't' });
    await flush();
    expect(sink.resets).toEqual([
      {
        kind: 'reset',
        reset: expect.objectContaining({
          reason: ResetReason.AheadOfLastSeq,
          snapshot: expect.objectContaining({ lastSeq: 2 }),
        }) as unknown,
      },
    ]);
  });
});
