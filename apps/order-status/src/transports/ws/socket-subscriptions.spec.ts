import { ByteBudget, ErrorCode } from '@app/contracts';
import { StreamEventBus } from '@app/event-bus';
import { inMemoryJobStore, type InMemoryJobStore } from '@app/event-bus/testing/bus-fixtures';
import { JobPhase, publishPhaseSync } from '@app/event-bus/testing/fixture-domain';
import {
  expectEstimateCovers,
  HEAP_MEASURE_TIMEOUT_MS,
  retainedHeap,
} from '../../../../../libs/contracts/src/testing/retained-heap';
import type { EngineBackpressure } from './engine-backpressure';
import type { OrdersSocket } from './orders-ws.events';
import { SocketSubscriptions, wsSubscriptionBytes } from './socket-subscriptions';

// Weighing the heap in a process shared with other spec files: memory an earlier one
// releases between the two readings can make one impossible (a negative size was seen in
// CI); each test here builds its own structures, so a second run of it decides.
jest.retryTimes(2, { logErrorsBeforeRetry: true });

/** Nothing is delivered in these specs: a socket and an engine that accept and never fill. */
const socket = { emit: () => true } as unknown as OrdersSocket;
const backpressure = {
  buffered: 0,
  isFull: () => false,
  whenDrained: (resume: () => void) => resume(),
} as unknown as EngineBackpressure;

describe('SocketSubscriptions memory', () => {
  let store: InMemoryJobStore;
  let bus: StreamEventBus;
  const orderIds = Array.from({ length: 20 }, (_, i) => `order-${String(i).padStart(58, '0')}`);

  beforeEach(() => {
    store = inMemoryJobStore();
    bus = new StreamEventBus(store);
    bus.start();
    for (const id of orderIds) publishPhaseSync(store, id, JobPhase.Queued);
  });
  afterEach(async () => {
    bus.stop();
    await store.close();
  });

  const session = (budget?: ByteBudget) =>
    new SocketSubscriptions(bus, socket, backpressure, 100, async () => {}, budget);

  it('refuses a subscription past the budget all sockets share, and gives the bytes back', async () => {
    const one = wsSubscriptionBytes(orderIds[0]);
    const budget = new ByteBudget('ws_subscriptions', one * 5);
    const a = session(budget);
    const b = session(budget);
    for (const id of orderIds.slice(0, 3)) (await a.subscribe(id, 1)).start();
    for (const id of orderIds.slice(0, 2)) (await b.subscribe(id, 1)).start();
    await expect(b.subscribe(orderIds[2], 1)).rejects.toMatchObject({
      code: ErrorCode.ResourceExhausted,
      retryAfterMs: 5_000,
    });
    // Replacing a subscription (a new resume point) takes over its bytes: not refused.
    (await a.subscribe(orderIds[0], 1)).start();
    expect(budget.memoryUse).toMatchObject({ entries: 5, bytes: one * 5, refusals: 1 });
    a.unsubscribe(orderIds[1]);
    (await b.subscribe(orderIds[2], 1)).start();
    a.close();
    b.expire();
    expect(budget.memoryUse).toMatchObject({ entries: 0, bytes: 0 });
    expect(bus.stats.subscriptionsByTransport.get('ws') ?? 0).toBe(0);
  });

  it(
    'its estimate is at least the heap a subscription really holds, and not far above',
    async () => {
      const budget = new ByteBudget('ws_subscriptions', 1024 ** 3);
      const sessions = Array.from({ length: 100 }, () => session(budget));
      // Once before measuring, so code compiled on first use is not counted as data.
      const warm = session(budget);
      for (const id of orderIds) (await warm.subscribe(id, 1)).start();
      warm.close();
      const { bytes } = await retainedHeap(async () => {
        for (const s of sessions) {
          for (const id of orderIds) (await s.subscribe(id, 1)).start();
        }
        return sessions;
      });
      expect(budget.memoryUse.entries).toBe(2_000);
      expectEstimateCovers(bytes, budget.memoryUse.bytes);
      for (const s of sessions) s.close();
    },
    HEAP_MEASURE_TIMEOUT_MS,
  );
});
