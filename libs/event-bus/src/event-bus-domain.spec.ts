import { ResetReason, StreamEndReason, type StreamDomain } from '@app/contracts';
import { OverflowPolicy } from './bus-options';
import { StreamEventBus } from './event-bus';
import { ControlledStore, flush, RecordingSink } from './testing/bus-fixtures';
import { JOB_DOMAIN, JobPhase, type JobEvent, type JobSnapshot } from './testing/fixture-domain';

/**
 * The bus decides nothing about a domain's life cycle itself: the store's descriptor says
 * which event finishes a stream and how a snapshot is folded. Here a domain finishes at
 * seq 3 whatever the phase, which the job domain never does for `building`.
 */
const FINISHES_AT_3: StreamDomain<JobEvent, JobSnapshot> = {
  ...JOB_DOMAIN,
  name: 'finishes-at-3',
  isTerminal: (event) => event.seq >= 3,
  isTerminalSnapshot: (snapshot) => snapshot.lastSeq >= 3,
};

describe('StreamEventBus over a domain descriptor', () => {
  let store: ControlledStore;
  let bus: StreamEventBus<JobEvent, JobSnapshot>;

  beforeEach(() => {
    store = new ControlledStore();
    store.domain = FINISHES_AT_3;
    bus = new StreamEventBus(store);
    bus.start();
  });
  afterEach(() => bus.stop());

  it("ends a live stream as completed at the domain's terminal event", async () => {
    store.publishNow('A', JobPhase.Building);
    const sink = new RecordingSink();
    await bus.open('A', 0, sink);
    store.publishNow('A', JobPhase.Building);
    store.publishNow('A', JobPhase.Building);
    await flush();
    expect(sink.seqs).toEqual([1, 2, 3]);
    expect(sink.ends).toEqual([StreamEndReason.Completed]);
    expect(bus.subscriberCount('A')).toBe(0);
  });

  it('ends a resume at the finished point at once, by the snapshot rule', async () => {
    for (let i = 0; i < 3; i++) store.publishNow('A', JobPhase.Building);
    const sink = new RecordingSink();
    await bus.open('A', 3, sink);
    await flush();
    expect(sink.items).toEqual([]);
    expect(sink.ends).toEqual([StreamEndReason.Completed]);
  });

  it("ends a stream whose overflow reset carries the domain's terminal state", async () => {
    store.publishNow('A', JobPhase.Building);
    const sink = new RecordingSink();
    sink.accept = () => false;
    await bus.open('A', 0, sink, { queueCapacity: 1, overflowPolicy: OverflowPolicy.Conflate });
    store.publishNow('A', JobPhase.Building);
    store.publishNow('A', JobPhase.Building);
    sink.accept = () => true;
    while (sink.fireDrain()) await flush();
    const reset = sink.items.find((it) => it.kind === 'reset');
    expect(reset?.kind === 'reset' && reset.reset.reason).toBe(ResetReason.Overflow);
    expect(sink.ends).toEqual([StreamEndReason.Completed]);
  });
});
