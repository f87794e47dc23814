import {
  ORDER_DOMAIN,
  acceptsTracking,
  canTransition,
  isTerminalStatus,
  isTrackingUpdate,
  OrderStatus,
  type OrderEvent,
  type OrderSnapshot,
  type OrderStatusChanged,
} from '@app/order-domain';
import { InMemoryStreamStore } from '@app/store';
import { OrderSimulator, SIMULATOR_TICK_MS } from './simulator';
import { waitFor } from '@app/event-bus/testing/bus-fixtures';

describe('OrderSimulator', () => {
  let store: InMemoryStreamStore<OrderEvent, OrderSnapshot>;
  let sim: OrderSimulator;
  let events: OrderEvent[];

  beforeEach(() => {
    store = new InMemoryStreamStore({ domain: ORDER_DOMAIN });
    sim = new OrderSimulator(store);
    events = [];
    store.events$.subscribe((e) => events.push(e));
  });
  afterEach(() => {
    sim.stop();
    store.close();
  });

  const statusChanges = (): OrderStatusChanged[] =>
    events.filter((e): e is OrderStatusChanged => !isTrackingUpdate(e));

  /**
   * Every order's events are contiguous from 1, every status change is a real change
   * that follows the life cycle, and tracking updates come only while shipped or out for
   * delivery, with the order's current status.
   */
  function expectValidStreams(): void {
    const byOrder = new Map<string, OrderEvent[]>();
    for (const e of events) byOrder.set(e.orderId, [...(byOrder.get(e.orderId) ?? []), e]);
    for (const list of byOrder.values()) {
      let status: OrderStatus | undefined;
      list.forEach((e, i) => {
        expect(e.seq).toBe(i + 1);
        if (isTrackingUpdate(e)) {
          expect(e.status).toBe(status);
          expect(acceptsTracking(e.status)).toBe(true);
        } else {
          expect(canTransition(status, e.status)).toBe(true);
          expect(e.previousStatus).toBe(status);
          status = e.status;
        }
      });
    }
  }

  it('starts idle', () => {
    expect(sim.status()).toMatchObject({ state: 'idle', published: 0, activeOrderIds: [] });
    expect(sim.start().state).toBe('idle'); // nothing prepared
  });

  describe('with fake timers', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('prepare() creates N orders at seq 1 and stays ready', async () => {
      const status = await sim.prepare({ orders: 5, ratePerOrder: 10, prefix: 'p' });
      expect(status.state).toBe('ready');
      expect(status.activeOrderIds).toEqual(['p-1', 'p-2', 'p-3', 'p-4', 'p-5']);
      expect(status.published).toBe(5);
      expect(status.startedAtUs).toBeUndefined();
      expect(events.map((e) => [e.orderId, e.seq, e.status])).toEqual(
        status.activeOrderIds.map((id) => [id, 1, OrderStatus.Created]),
      );
      jest.advanceTimersByTime(5_000);
      expect(events).toHaveLength(5);
      expect(sim.status().state).toBe('ready');
    });

    it('start() publishes at the aggregate rate, spread over the orders', async () => {
      await sim.prepare({ orders: 4, ratePerOrder: 25, lifecycle: false });
      events.length = 0;
      const started = sim.start();
      expect(started.state).toBe('running');
      expect(started.startedAtUs).toBeGreaterThan(0);
      jest.advanceTimersByTime(1_000);
      // 4 orders x 25/s = 100 events in the first second (one tick of slack).
      expect(events.length).toBeGreaterThanOrEqual(100 - 4);
      expect(events.length).toBeLessThanOrEqual(100);
      jest.advanceTimersByTime(2_000);
      expect(events.length).toBeGreaterThanOrEqual(300 - 4);
      expect(events.length).toBeLessThanOrEqual(300);
      // Round-robin: each order got its share.
      for (const id of sim.status().activeOrderIds) {
        const n = events.filter((e) => e.orderId === id).length;
        expect(n).toBeGreaterThanOrEqual(73);
        expect(n).toBeLessThanOrEqual(75);
      }
      expect(sim.status().failed).toBe(0);
    });

    it('catches up after a late tick instead of lowering the rate', async () => {
      await sim.prepare({ orders: 2, ratePerOrder: 50, lifecycle: false });
      events.length = 0;
      sim.start();
      // Time jumps without ticks (a blocked event loop), then one tick runs.
      jest.setSystemTime(Date.now() + 1_000);
      jest.advanceTimersByTime(1_000 + SIMULATOR_TICK_MS);
      expect(events.length).toBeGreaterThanOrEqual(100);
      expect(events.length).toBeLessThanOrEqual(202);
    });

    it('lifecycle: false ships every order in prepare(), then publishes tracking updates only', async () => {
      const ready = await sim.prepare({ orders: 3, ratePerOrder: 100, lifecycle: false });
      expect(ready.published).toBe(6);
      expect(statusChanges().map((e) => e.status)).toEqual([
        ...ready.activeOrderIds.map(() => OrderStatus.Created),
        ...ready.activeOrderIds.map(() => OrderStatus.Shipped),
      ]);
      const ids = sim.status().activeOrderIds;
      events.length = 0;
      sim.start();
      jest.advanceTimersByTime(3_000);
      expect(events.length).toBeGreaterThan(800);
      expect(events.every(isTrackingUpdate)).toBe(true);
      expect(sim.status().activeOrderIds).toEqual(ids);
      for (const id of ids) {
        expect(store.getSnapshotSync(id)).toMatchObject({
          status: OrderStatus.Shipped,
          tracking: { etaMs: expect.any(Number) as number },
        });
      }
      expect(sim.status().failed).toBe(0);
    });

    it('lifecycle: true moves orders after dwell times, cancels every tenth with a reason, and replaces finished ones', async () => {
      await sim.prepare({ orders: 12, ratePerOrder: 0.5 });
      const first = sim.status().activeOrderIds;
      sim.start();
      // Dwell times are seconds, not ticks: nothing moves in the first second.
      jest.advanceTimersByTime(1_000);
      expect(statusChanges().filter((e) => e.status !== OrderStatus.Created)).toEqual([]);
      // Async: a replacement order is planned once its `created` publish has settled.
      await jest.advanceTimersByTimeAsync(240_000);
      const now = sim.status();
      expect(now.activeOrderIds).toHaveLength(12);
      expect(now.activeOrderIds).not.toEqual(first);
      expect(now.failed).toBe(0);
      const terminal = statusChanges().filter((e) => isTerminalStatus(e.status));
      expect(terminal.length).toBeGreaterThan(12);
      const cancelled = terminal.filter((e) => e.status === OrderStatus.Cancelled);
      expect(cancelled.find((e) => e.orderId === 'order-10')).toMatchObject({
        previousStatus: OrderStatus.Paid,
        reason: 'cancelled by the customer',
      });
      for (const e of cancelled) {
        expect(Number(e.orderId.split('-')[1]) % 10).toBe(0);
        expect(e.reason).toEqual(expect.any(String));
      }
      for (const e of terminal.filter((x) => x.status === OrderStatus.Delivered)) {
        expect(e.previousStatus).toBe(OrderStatus.OutForDelivery);
      }
      // Shipped orders report where they are, heading for their ETA.
      const tracking = events.filter(isTrackingUpdate);
      expect(tracking.length).toBeGreaterThan(50);
      for (const t of tracking) {
        expect(Math.abs(t.location.lat - 52.52)).toBeLessThan(0.1);
        // One planned delivery time per order, kept by every update.
        expect(t.etaMs).toBe(tracking.find((x) => x.orderId === t.orderId)?.etaMs);
      }
      // A finished order publishes nothing more; its replacement starts at created.
      for (const e of terminal) {
        expect(events.filter((x) => x.orderId === e.orderId && x.seq > e.seq)).toEqual([]);
      }
      expectValidStreams();
    });

    it('longLivedOrders never finish (new rounds out for delivery), speed shortens dwell times', async () => {
      await sim.prepare({ orders: 3, ratePerOrder: 1, longLivedOrders: 1, speed: 10 });
      sim.start();
      // Ten minutes of the demo's life cycle in one: the others finish and are replaced.
      await jest.advanceTimersByTimeAsync(60_000);
      const ids = sim.status().activeOrderIds;
      expect(ids[0]).toBe('order-1');
      expect(ids.slice(1).every((id) => Number(id.split('-')[1]) > 3)).toBe(true);
      const ofOrder1 = events.filter((e) => e.orderId === 'order-1');
      expect(ofOrder1.filter((e) => !isTrackingUpdate(e) && isTerminalStatus(e.status))).toEqual(
        [],
      );
      // Still moving: new rounds (new ETAs), and more tracking updates a few seconds later.
      const tracking = () => events.filter((e) => e.orderId === 'order-1' && isTrackingUpdate(e));
      expect(new Set(tracking().map((t) => isTrackingUpdate(t) && t.etaMs)).size).toBeGreaterThan(
        3,
      );
      const before = tracking().length;
      await jest.advanceTimersByTimeAsync(5_000);
      expect(tracking().length).toBeGreaterThanOrEqual(before + 3);
      expect(sim.status().failed).toBe(0);
      expectValidStreams();
    });

    it('rejects a speed or longLivedOrders it cannot use', async () => {
      await expect(sim.prepare({ orders: 1, ratePerOrder: 1, speed: 0 })).rejects.toThrow(/speed/);
      await expect(
        sim.prepare({ orders: 1, ratePerOrder: 1, longLivedOrders: -1 }),
      ).rejects.toThrow(/longLivedOrders/);
    });

    it('stop() stops publishing', async () => {
      await sim.prepare({ orders: 2, ratePerOrder: 100, lifecycle: false });
      sim.start();
      jest.advanceTimersByTime(500);
      expect(sim.stop().state).toBe('stopped');
      const n = events.length;
      jest.advanceTimersByTime(5_000);
      expect(events.length).toBe(n);
      expect(jest.getTimerCount()).toBe(0);
      expect(sim.start().state).toBe('stopped'); // needs a new prepare()
    });

    it('durationMs stops the run by itself', async () => {
      await sim.prepare({ orders: 1, ratePerOrder: 100, lifecycle: false, durationMs: 500 });
      sim.start();
      jest.advanceTimersByTime(2_000);
      expect(sim.status().state).toBe('stopped');
      // created and shipped, then 50 tracking updates in 500 ms.
      expect(events.length).toBeLessThanOrEqual(2 + 50);
      expect(events.length).toBeGreaterThanOrEqual(2 + 45);
    });

    it('a second prepare() adopts orders an earlier run left mid-way', async () => {
      await sim.prepare({ orders: 2, ratePerOrder: 100, lifecycle: false });
      sim.start();
      // The async variant lets each publish settle, as it would between real ticks.
      await jest.advanceTimersByTimeAsync(1_000);
      const again = await sim.prepare({ orders: 2, ratePerOrder: 100, lifecycle: false });
      expect(again.state).toBe('ready');
      expect(again.published).toBe(0);
      expect(again.failed).toBe(2); // `created` was refused: the orders had moved on
      sim.start();
      await jest.advanceTimersByTimeAsync(500);
      expect(sim.status().failed).toBe(2);
      expect(sim.status().published).toBeGreaterThan(90);
      expectValidStreams();
    });
  });

  it('publishes at no more than the requested rate in real time', async () => {
    await sim.prepare({ orders: 4, ratePerOrder: 50, lifecycle: false }); // 200 events/s
    events.length = 0;
    const t0 = performance.now();
    sim.start();
    await waitFor(() => events.length >= 40, '40 simulated events');
    const elapsedMs = performance.now() - t0;
    sim.stop();
    // 40 events at 200/s take 200 ms; allow for a late tick but never faster than the rate.
    expect(elapsedMs).toBeGreaterThanOrEqual(190);
    expect(events.length).toBeLessThanOrEqual(Math.floor((elapsedMs / 1000) * 200) + 4);
  });
});
