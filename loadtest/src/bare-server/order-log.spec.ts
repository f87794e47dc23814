import { InMemoryStreamStore } from '../../../libs/store/src/in-memory-stream-store';
import {
  OrderSimulator,
  SIMULATOR_TICK_MS,
} from '../../../apps/order-status/src/simulator/simulator';
import { steadyTracking } from '../../../apps/order-status/src/simulator/simulator-plan';
import { PayloadSimulator } from '../../../apps/order-status/src/payload/payload-simulator';
import { ORDER_DOMAIN } from '../../../libs/order-domain/src';
import { PAYLOAD_DOMAIN, publishPayload } from '../../../libs/payload-domain/src';
import { nameOf } from './bare-api';
import { bareSteadyTracking, isTracking, OrderLog, type BareSchedule } from './order-log';

const ORDER_EVENTS: BareSchedule = { domain: 'order' };

describe('bare order log', () => {
  it('makes the same tracking values as the service simulator, so both put the same bytes on the wire', () => {
    for (const step of [0, 1, 7, 999, 1000, 123_456]) {
      expect(bareSteadyTracking(step, 1_800_000_000_000)).toEqual(
        steadyTracking(step, 1_800_000_000_000),
      );
    }
  });

  it('writes status changes and tracking updates with the service field order', () => {
    const log = new OrderLog();
    log.prepare(1, 10, ORDER_EVENTS, 'lt');
    const [created, shipped] = log.after('lt-1', 0);
    const tracked = log.track('lt-1', 0, 1_800_000_000_000);
    expect(Object.keys(created)).toEqual(['orderId', 'seq', 'status', 'publishedAtUs']);
    expect(Object.keys(shipped)).toEqual([
      'orderId',
      'seq',
      'status',
      'previousStatus',
      'publishedAtUs',
    ]);
    expect(isTracking(tracked)).toBe(true);
    expect(Object.keys(tracked)).toEqual([
      'orderId',
      'seq',
      'status',
      'publishedAtUs',
      'location',
      'etaMs',
    ]);
    expect(tracked).toMatchObject({ seq: 3, status: 'shipped' });
  });

  it('writes payload events as the payload domain does, so bytes per event compare', async () => {
    const store = new InMemoryStreamStore({ domain: PAYLOAD_DOMAIN });
    const served = await publishPayload(store, { orderId: 'lt-1', bytes: 40 });
    store.close();
    const log = new OrderLog();
    log.prepare(1, 10, { domain: 'payload', bytes: 40 }, 'lt');
    const [first] = log.after('lt-1', 0);
    expect(JSON.stringify({ ...first, publishedAtUs: 0 })).toBe(
      JSON.stringify({ ...served, publishedAtUs: 0 }),
    );
    expect(nameOf(first)).toBe(PAYLOAD_DOMAIN.kinds[0].wireName);
  });

  describe('pacing', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    /**
     * Which orders publish in each simulator tick over `ms`: the bare log's and the
     * service simulator's, started at the same (fake) instant with the same schedule.
     */
    async function ticks(
      orders: number,
      ratePerOrder: number,
      ms: number,
      domain: BareSchedule['domain'] = 'order',
    ) {
      const payloads = domain === 'payload';
      let store: Pick<InMemoryStreamStore, 'events$' | 'close'>;
      let sim: PayloadSimulator | OrderSimulator;
      if (payloads) {
        const payloadStore = new InMemoryStreamStore({ domain: PAYLOAD_DOMAIN });
        const payloadSim = new PayloadSimulator(payloadStore);
        await payloadSim.prepare({ orders, ratePerOrder, payloadBytes: 8, prefix: 'lt' });
        [store, sim] = [payloadStore, payloadSim];
      } else {
        const orderStore = new InMemoryStreamStore({ domain: ORDER_DOMAIN });
        const orderSim = new OrderSimulator(orderStore);
        await orderSim.prepare({ orders, ratePerOrder, lifecycle: false, prefix: 'lt' });
        [store, sim] = [orderStore, orderSim];
      }
      const simIds: string[] = [];
      store.events$.subscribe((e) => simIds.push(e.orderId));
      const log = new OrderLog();
      log.prepare(
        orders,
        ratePerOrder,
        payloads ? { domain: 'payload', bytes: 8 } : ORDER_EVENTS,
        'lt',
      );
      const logIds: string[] = [];
      for (let i = 1; i <= orders; i++) log.listen(`lt-${i}`, (e) => logIds.push(e.orderId));
      sim.start();
      log.start();
      const perTick: { sim: string[]; bare: string[] }[] = [];
      for (let t = 0; t < ms; t += SIMULATOR_TICK_MS) {
        jest.advanceTimersByTime(SIMULATOR_TICK_MS);
        perTick.push({ sim: simIds.splice(0), bare: logIds.splice(0) });
      }
      sim.stop();
      log.stop();
      store.close();
      return perTick;
    }

    it('publishes what the service simulator publishes, tick by tick: the aggregate rate round robin, not every order at once', async () => {
      // 50 orders at 10/s: 500 events/s, five per 10 ms tick. Publishing every order in
      // the same tick would let the bare server answer 50 subscribers in one write where
      // the service answers five, and make the floor cheaper than the same load is.
      const perTick = await ticks(50, 10, 1_000);
      expect(perTick.map((t) => t.bare)).toEqual(perTick.map((t) => t.sim));
      expect(perTick.flatMap((t) => t.bare)).toHaveLength(500);
      // Five a tick, give or take the one that floating-point rounding moves to the next.
      expect(Math.max(...perTick.map((t) => t.bare.length))).toBeLessThanOrEqual(6);
    });

    it('matches the simulator at one order and at a rate that does not divide the tick', async () => {
      for (const [orders, rate] of [
        [1, 10],
        [7, 3],
      ]) {
        const perTick = await ticks(orders, rate, 2_000);
        expect(perTick.map((t) => t.bare)).toEqual(perTick.map((t) => t.sim));
        expect(perTick.flatMap((t) => t.bare)).toHaveLength(orders * rate * 2);
      }
    });

    it("publishes the payload domain's schedule in the same ticks as the service's payload simulator", async () => {
      const perTick = await ticks(7, 3, 2_000, 'payload');
      expect(perTick.map((t) => t.bare)).toEqual(perTick.map((t) => t.sim));
      expect(perTick.flatMap((t) => t.bare)).toHaveLength(42);
    });
  });
});
