import { StreamEndReason } from '@app/contracts';
import { StreamEventBus } from './event-bus';
import { ControlledStore, RecordingSink } from './testing/bus-fixtures';
import { JobPhase } from './testing/fixture-domain';

/**
 * Every subscription's max age and token expiry (and every held long-poll's wait, see
 * poll.spec.ts) are deadlines in the bus's one queue: an idle connection holds no timer of its own (a
 * Timeout, its callback and, for jittered durations, a timer list each).
 */
describe('subscription deadlines', () => {
  let store: ControlledStore;
  let bus: StreamEventBus;
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
    store = new ControlledStore();
    bus = new StreamEventBus(store, { maxStreamAgeMs: 60_000, maxStreamAgeJitterMs: 30_000 });
    bus.start();
    for (let i = 0; i < 50; i++) store.publishNow(`o-${i}`, JobPhase.Queued);
  });
  afterEach(() => {
    bus.stop();
    jest.useRealTimers();
  });

  it('50 idle subscriptions with jittered max ages share one timer', async () => {
    const timersBefore = jest.getTimerCount();
    const subs = await Promise.all(
      Array.from({ length: 50 }, (_, i) => bus.open(`o-${i}`, 1, new RecordingSink())),
    );
    expect(jest.getTimerCount() - timersBefore).toBeLessThanOrEqual(1);
    expect(bus.deadlines.size).toBe(50);
    for (const s of subs) s.close();
    expect(bus.deadlines.size).toBe(0);
  });

  it('ends each stream with max_age within its jittered window, and token_expired first when the token lapses', async () => {
    const sinks = Array.from({ length: 10 }, () => new RecordingSink());
    await Promise.all(sinks.map((sink, i) => bus.open(`o-${i}`, 1, sink)));
    const expiring = new RecordingSink();
    await bus.open('o-20', 1, expiring, { expiresAtMs: Date.now() + 5_000 });
    jest.advanceTimersByTime(5_000);
    expect(expiring.ends).toEqual([StreamEndReason.TokenExpired]);
    jest.advanceTimersByTime(60_000 - 5_000 - 1);
    expect(sinks.flatMap((s) => s.ends)).toEqual([]);
    jest.advanceTimersByTime(30_000 + 1);
    expect(sinks.map((s) => s.ends)).toEqual(sinks.map(() => [StreamEndReason.MaxAge]));
    expect(bus.subscriberCount()).toBe(0);
    expect(bus.deadlines.size).toBe(0);
  });
});
