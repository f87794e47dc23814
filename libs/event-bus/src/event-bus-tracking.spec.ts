import {
  cursorAfter,
  OrderStatus,
  ResetReason,
  StreamEndReason,
  type StreamItem,
} from '@app/contracts';
import { BoundedQueue } from './bounded-queue';
import { OverflowPolicy } from './bus-options';
import { OrderEventBus } from './event-bus';
import { InMemoryOrderStore } from './in-memory-order-store';
import { event, flush, RecordingSink, trackingEvent } from './testing/bus-fixtures';

const HERE = { lat: 48.137, lon: 11.575 };

/** The bus with the in-memory store: the store enforces the life cycle, as in production. */
function setup(opts: { queueCapacity?: number; overflowPolicy?: OverflowPolicy } = {}) {
  const store = new InMemoryOrderStore();
  const bus = new OrderEventBus(store, opts);
  bus.start();
  const ship = (orderId: string) => {
    store.publishSync({ orderId, status: OrderStatus.Created });
    store.publishSync({ orderId, status: OrderStatus.Shipped });
  };
  const track = (orderId: string, etaMs = 1_000) =>
    store.publishTrackingSync({ orderId, location: HERE, etaMs });
  return { store, bus, ship, track };
}

const kinds = (items: readonly StreamItem[]) => items.map((it) => `${it.kind}@${cursorAfter(it)}`);

describe('tracking updates on the bus', () => {
  it('delivers tracking items in seq order with status changes, live and on resume', async () => {
    const { store, bus, ship, track } = setup();
    try {
      ship('o');
      const live = new RecordingSink();
      await bus.open('o', 0, live);
      track('o');
      store.publishSync({ orderId: 'o', status: OrderStatus.OutForDelivery });
      track('o', 2_000);
      store.publishSync({ orderId: 'o', status: OrderStatus.Delivered });
      const expected = ['event@1', 'event@2', 'tracking@3', 'event@4', 'tracking@5', 'event@6'];
      expect(kinds(live.items)).toEqual(expected);
      expect(live.ends).toEqual([StreamEndReason.Completed]);
      // A resume in the middle replays both kinds from the ring.
      const resumed = new RecordingSink();
      await bus.open('o', 2, resumed);
      expect(kinds(resumed.items)).toEqual(expected.slice(2));
      expect(resumed.items[0]).toMatchObject({
        kind: 'tracking',
        tracking: { status: OrderStatus.Shipped, location: HERE, etaMs: 1_000 },
      });
      // The bus's snapshot counts tracking seqs and keeps the newest tracking.
      expect(await bus.getSnapshot('o')).toMatchObject({
        status: OrderStatus.Delivered,
        lastSeq: 6,
        tracking: { location: HERE, etaMs: 2_000 },
      });
    } finally {
      bus.stop();
      store.close();
    }
  });

  it('a tracking update never completes a stream', async () => {
    const { store, bus, ship, track } = setup();
    try {
      ship('o');
      const sink = new RecordingSink();
      await bus.open('o', 0, sink);
      for (let i = 0; i < 5; i++) track('o');
      await flush();
      expect(sink.ends).toEqual([]);
      expect(sink.seqs).toEqual([1, 2, 3, 4, 5, 6, 7]);
    } finally {
      bus.stop();
      store.close();
    }
  });

  it('conflation replaces queued status changes and tracking alike; the newest item still tells the status', () => {
    const q = new BoundedQueue(3, OverflowPolicy.Conflate);
    q.offer({ kind: 'event', event: event('o', 1, OrderStatus.Shipped) });
    q.offer({ kind: 'tracking', tracking: trackingEvent('o', 2) });
    q.offer({ kind: 'event', event: event('o', 3, OrderStatus.OutForDelivery) });
    const newest = trackingEvent('o', 4, OrderStatus.OutForDelivery);
    expect(q.offer({ kind: 'tracking', tracking: newest })).toEqual({ accepted: true, dropped: 3 });
    const items = [q.shift(), q.shift()];
    expect(items).toEqual([
      { kind: 'skipped', skipped: { fromSeq: 1, toSeq: 3, reason: 'overflow' } },
      { kind: 'tracking', tracking: newest },
    ]);
    // The client learns the status it missed from the tracking update itself.
    expect(items[1]?.kind === 'tracking' && items[1].tracking.status).toBe(
      OrderStatus.OutForDelivery,
    );
  });

  it("a queue too small for a marker folds into a reset with the tracking update's state", () => {
    const q = new BoundedQueue(1, OverflowPolicy.DropOldest);
    q.offer({ kind: 'event', event: event('o', 1, OrderStatus.Shipped) });
    const newest = trackingEvent('o', 2, OrderStatus.Shipped, 77);
    q.offer({ kind: 'tracking', tracking: newest });
    expect(q.shift()).toEqual({
      kind: 'reset',
      reset: {
        reason: ResetReason.Overflow,
        snapshot: {
          orderId: 'o',
          status: OrderStatus.Shipped,
          lastSeq: 2,
          updatedAtUs: 77,
          tracking: { location: newest.location, etaMs: newest.etaMs },
        },
      },
    });
  });

  it('slow subscriber under conflate: skipped range, then the newest tracking update', async () => {
    const { store, bus, ship, track } = setup({ queueCapacity: 2 });
    try {
      ship('o');
      const sink = new RecordingSink();
      sink.accept = () => false; // full after the first write
      await bus.open('o', 2, sink);
      for (let i = 0; i < 10; i++) track('o', 1_000 + i);
      sink.accept = () => true;
      sink.fireDrain();
      expect(kinds(sink.items)).toEqual(['tracking@3', 'skipped@11', 'tracking@12']);
      expect(sink.items.at(-1)).toMatchObject({ tracking: { etaMs: 1_009 } });
    } finally {
      bus.stop();
      store.close();
    }
  });
});
