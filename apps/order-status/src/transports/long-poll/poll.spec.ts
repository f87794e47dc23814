import { ErrorCode, ResetReason } from '@app/contracts';
import { StreamEventBus } from '@app/event-bus';
import { DEFAULT_POLL_MAX_BATCH, openPoll, type PollOptions, type PollResult } from './poll';
import { ControlledStore } from '@app/event-bus/testing/bus-fixtures';
import { JobPhase } from '@app/event-bus/testing/fixture-domain';

/** One poll as a promise: what a caller that holds nothing else would write. */
const pollOnce = (bus: StreamEventBus, orderId: string, after: number, opts: PollOptions) =>
  new Promise<PollResult>((resolve, reject) => {
    openPoll(bus, orderId, after, opts, resolve).catch(reject);
  });

const seqsOf = (items: { kind: string; step?: { seq: number } }[]) =>
  items.flatMap((it) => (it.kind === 'step' && it.step ? [it.step.seq] : []));

describe('openPoll, awaited', () => {
  let store: ControlledStore;
  let bus: StreamEventBus;
  const publish = (n: number, phase = JobPhase.Building) => {
    for (let i = 0; i < n; i++) store.publishNow('o', phase);
  };

  beforeEach(() => {
    store = new ControlledStore();
    bus = new StreamEventBus(store, { ringSize: 1_000 });
    bus.start();
  });
  afterEach(() => bus.stop());

  it('answers at once with what is pending, as one batch, and releases the subscription', async () => {
    publish(5);
    const t0 = Date.now();
    const res = await pollOnce(bus, 'o', 2, { waitMs: 10_000 });
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(seqsOf(res.items)).toEqual([3, 4, 5]);
    expect(res.completed).toBe(false);
    expect(bus.subscriberCount()).toBe(0);
    expect(bus.stats.subscriptionsByTransport.get('long-poll')).toBe(0);
    expect(bus.stats.deliveredByTransport.get('long-poll')).toBe(3);
  });

  it('caps a response at maxBatch, and the next cursor continues exactly', async () => {
    publish(25);
    const seen: number[] = [];
    let after = 0;
    for (let round = 0; round < 3; round++) {
      const res = await pollOnce(bus, 'o', after, { waitMs: 0, maxBatch: 10 });
      expect(res.items.length).toBeLessThanOrEqual(10);
      const seqs = seqsOf(res.items);
      seen.push(...seqs);
      after = seqs[seqs.length - 1];
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    const last = await pollOnce(bus, 'o', after, { waitMs: 0, maxBatch: 10 });
    expect(last.items).toEqual([]);
    expect(bus.subscriberCount()).toBe(0);
  });

  it('defaults maxBatch to DEFAULT_POLL_MAX_BATCH', async () => {
    publish(DEFAULT_POLL_MAX_BATCH + 20);
    const res = await pollOnce(bus, 'o', 0, { waitMs: 0 });
    expect(res.items).toHaveLength(DEFAULT_POLL_MAX_BATCH);
  });

  it('waits for the first live event and answers with it', async () => {
    publish(3);
    const polling = pollOnce(bus, 'o', 3, { waitMs: 5_000, transport: 'lp-test' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(bus.subscriberCount('o')).toBe(1);
    const t0 = Date.now();
    publish(2); // one synchronous burst: both go into the same answer
    const res = await polling;
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(seqsOf(res.items)).toEqual([4, 5]);
    expect(bus.subscriberCount()).toBe(0);
    expect(bus.stats.subscriptionsByTransport.get('lp-test')).toBe(0);
  });

  it('answers empty once waitMs passes with nothing new', async () => {
    publish(1);
    const t0 = Date.now();
    const res = await pollOnce(bus, 'o', 1, { waitMs: 50 });
    const elapsed = Date.now() - t0;
    expect(res).toEqual({ items: [], completed: false });
    expect(elapsed).toBeGreaterThanOrEqual(45);
    expect(elapsed).toBeLessThan(1_000);
    expect(bus.subscriberCount()).toBe(0);
  });

  it('waitMs 0 answers at once (short-poll)', async () => {
    publish(1);
    const t0 = Date.now();
    const res = await pollOnce(bus, 'o', 1, { waitMs: 0 });
    expect(Date.now() - t0).toBeLessThan(200);
    expect(res).toEqual({ items: [], completed: false });
    expect(bus.subscriberCount()).toBe(0);
  });

  it('sets completed when the batch holds the terminal event', async () => {
    publish(1, JobPhase.Queued);
    publish(1, JobPhase.Done);
    const res = await pollOnce(bus, 'o', 0, { waitMs: 1_000 });
    expect(seqsOf(res.items)).toEqual([1, 2]);
    expect(res.completed).toBe(true);
    const again = await pollOnce(bus, 'o', 2, { waitMs: 1_000 });
    expect(again).toEqual({ items: [], completed: true });
    expect(bus.subscriberCount()).toBe(0);
  });

  it('sets completed when a live terminal event ends the wait', async () => {
    publish(1, JobPhase.Queued);
    const polling = pollOnce(bus, 'o', 1, { waitMs: 5_000 });
    await new Promise((resolve) => setImmediate(resolve));
    publish(1, JobPhase.Failed);
    const res = await polling;
    expect(seqsOf(res.items)).toEqual([2]);
    expect(res.completed).toBe(true);
  });

  it('answers a reset when the cursor cannot be served', async () => {
    publish(3);
    const res = await pollOnce(bus, 'o', 9, { waitMs: 1_000 });
    expect(res.items).toHaveLength(1);
    expect(res.items[0]).toMatchObject({
      kind: 'reset',
      reset: { reason: ResetReason.AheadOfLastSeq, snapshot: { lastSeq: 3 } },
    });
  });

  it('rejects with NotFound for an unknown order and leaves nothing behind', async () => {
    await expect(pollOnce(bus, 'nope', 0, { waitMs: 1_000 })).rejects.toMatchObject({
      code: ErrorCode.NotFound,
    });
    expect(bus.subscriberCount()).toBe(0);
  });
});

describe('openPoll (callback form)', () => {
  let store: ControlledStore;
  let bus: StreamEventBus;
  beforeEach(() => {
    store = new ControlledStore();
    bus = new StreamEventBus(store, { ringSize: 1_000 });
    bus.start();
    store.publishNow('o', JobPhase.Queued);
  });
  afterEach(() => bus.stop());

  it('calls back exactly once with the first live batch; a later close is a no-op', async () => {
    const results: number[][] = [];
    const hold = await openPoll(bus, 'o', 1, { waitMs: 10_000 }, (r) =>
      results.push(seqsOf(r.items)),
    );
    expect(results).toEqual([]);
    expect(bus.subscriberCount()).toBe(1);
    store.publishNow('o', JobPhase.Building);
    store.publishNow('o', JobPhase.Testing);
    await new Promise((resolve) => setImmediate(resolve));
    expect(results).toEqual([[2, 3]]);
    expect(bus.subscriberCount()).toBe(0);
    hold.close();
    store.publishNow('o', JobPhase.Deploying);
    await new Promise((resolve) => setImmediate(resolve));
    expect(results).toHaveLength(1);
  });

  it('close answers at once with nothing and releases the subscription', async () => {
    const results: number[][] = [];
    const hold = await openPoll(bus, 'o', 1, { waitMs: 10_000 }, (r) =>
      results.push(seqsOf(r.items)),
    );
    hold.close();
    expect(results).toEqual([[]]);
    expect(bus.subscriberCount()).toBe(0);
  });

  it('times out after waitMs with an empty answer', async () => {
    const t0 = Date.now();
    const result = await new Promise<number[]>((resolve) => {
      void openPoll(bus, 'o', 1, { waitMs: 50 }, (r) => resolve(seqsOf(r.items)));
    });
    expect(result).toEqual([]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
    expect(bus.subscriberCount()).toBe(0);
  });

  it('rejects before any callback when the order is unknown', async () => {
    const onResult = jest.fn();
    await expect(openPoll(bus, 'nope', 0, { waitMs: 1_000 }, onResult)).rejects.toMatchObject({
      code: ErrorCode.NotFound,
    });
    expect(onResult).not.toHaveBeenCalled();
    expect(bus.subscriberCount()).toBe(0);
  });
});

describe('held long-polls, on the bus deadline queue', () => {
  let store: ControlledStore;
  let bus: StreamEventBus;
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
    store = new ControlledStore();
    bus = new StreamEventBus(store);
    bus.start();
    for (let i = 0; i < 20; i++) store.publishNow(`o-${i}`, JobPhase.Queued);
  });
  afterEach(() => {
    bus.stop();
    jest.useRealTimers();
  });

  it('held long-polls wait on the same queue and answer empty at their deadline', async () => {
    const timersBefore = jest.getTimerCount();
    const answers: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        openPoll(bus, `o-${i}`, 1, { waitMs: 25_000 }, (r) => answers.push(r.items.length)),
      ),
    );
    expect(jest.getTimerCount() - timersBefore).toBeLessThanOrEqual(1);
    jest.advanceTimersByTime(24_999);
    expect(answers).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(answers).toEqual(Array.from({ length: 20 }, () => 0));
    expect(bus.subscriberCount()).toBe(0);
  });
});
