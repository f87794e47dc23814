import {
  canTransition,
  isTerminalStatus,
  OrderStatus,
  type OrderStatusChanged,
} from '@app/contracts';
import { InMemoryOrderStore } from './in-memory-order-store';
import { OrderSimulator, SIMULATOR_TICK_MS } from './simulator';
import { waitFor } from './testing/bus-fixtures';

describe('OrderSimulator', () => {
  let store: InMemoryOrderStore;
  let sim: OrderSimulator;
  let events: OrderStatusChanged[];

  beforeEach(() => {
    store = new InMemoryOrderStore();
    sim = new OrderSimulator(store);
    events = [];
    store.events$.subscribe((e) => events.push(e));
  });
  afterEach(() => {
    sim.stop();
    store.close();
  });

  /** Every order's events are contiguous from 1 and follow the life cycle. */
  function expectValidStreams(): void {
    const byOrder = new Map<string, OrderStatusChanged[]>();
    for (const e of events) byOrder.set(e.orderId, [...(byOrder.get(e.orderId) ?? []), e]);
    for (const list of byOrder.values()) {
      list.forEach((e, i) => {
        expect(e.seq).toBe(i + 1);
        expect(canTransition(list[i - 1]?.status, e.status)).toBe(true);
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

    it('lifecycle: false never reaches a terminal status and keeps the same orders', async () => {
      await sim.prepare({ orders: 3, ratePerOrder: 100, lifecycle: false, eventsPerStatus: 2 });
      const ids = sim.status().activeOrderIds;
      sim.start();
      jest.advanceTimersByTime(3_000);
      expect(events.length).toBeGreaterThan(800);
      expect(events.some((e) => isTerminalStatus(e.status))).toBe(false);
      expect(sim.status().activeOrderIds).toEqual(ids);
      // They settle at out_for_delivery and keep publishing tracking updates there.
      for (const id of ids) {
        expect(store.getSnapshotSync(id)?.status).toBe(OrderStatus.OutForDelivery);
      }
      expect(sim.status().failed).toBe(0);
      expectValidStreams();
    });

    it('lifecycle: true finishes orders (every tenth cancelled) and replaces them', async () => {
      await sim.prepare({ orders: 4, ratePerOrder: 50, eventsPerStatus: 1 });
      const first = sim.status().activeOrderIds;
      sim.start();
      jest.advanceTimersByTime(5_000);
      const now = sim.status();
      expect(now.activeOrderIds).toHaveLength(4);
      expect(now.activeOrderIds).not.toEqual(first);
      expect(now.failed).toBe(0);
      const terminal = events.filter((e) => isTerminalStatus(e.status));
      expect(terminal.length).toBeGreaterThan(20);
      const cancelled = terminal.filter((e) => e.status === OrderStatus.Cancelled);
      expect(cancelled.map((e) => e.orderId)).toContain('order-10');
      for (const e of cancelled) expect(Number(e.orderId.split('-')[1]) % 10).toBe(0);
      // A finished order publishes nothing more; its replacement starts at created.
      for (const e of terminal) {
        expect(events.filter((x) => x.orderId === e.orderId && x.seq > e.seq)).toEqual([]);
      }
      expectValidStreams();
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
      expect(events.length).toBeLessThanOrEqual(1 + 50);
      expect(events.length).toBeGreaterThanOrEqual(1 + 45);
    });

    it('a second prepare() adopts orders an earlier run left mid-way', async () => {
      await sim.prepare({ orders: 2, ratePerOrder: 100, lifecycle: false, eventsPerStatus: 1 });
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
