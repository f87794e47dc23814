import { ErrorCode, GatewayError } from '@app/contracts';
import {
  ORDER_DOMAIN,
  OrderStatus,
  publishStatus,
  publishStatusSync,
  type OrderEvent,
  type OrderSnapshot,
} from '@app/order-domain';
import { InMemoryStreamStore } from './in-memory-stream-store';
import { StreamState } from '@app/event-bus/stream-state';
import { describeEventModel } from './testing/event-model.store-spec';

describe('InMemoryStreamStore', () => {
  let store: InMemoryStreamStore<OrderEvent, OrderSnapshot>;
  let seen: OrderEvent[];

  beforeEach(() => {
    store = new InMemoryStreamStore({ domain: ORDER_DOMAIN });
    seen = [];
    store.events$.subscribe((e) => seen.push(e));
  });
  afterEach(() => store.close());

  it('assigns seqs per order from 1, announces every event and keeps the snapshot', async () => {
    const a1 = await publishStatus(store, { orderId: 'a', status: OrderStatus.Created });
    const b1 = await publishStatus(store, { orderId: 'b', status: OrderStatus.Created });
    const a2 = publishStatusSync(store, { orderId: 'a', status: OrderStatus.Paid });
    const a3 = publishStatusSync(store, { orderId: 'a', status: OrderStatus.Packed });
    expect([a1.seq, a2.seq, a3.seq, b1.seq]).toEqual([1, 2, 3, 1]);
    expect(seen).toEqual([a1, b1, a2, a3]);
    expect(a3.publishedAtUs).toBeGreaterThanOrEqual(a1.publishedAtUs);
    // Epoch microseconds from the process's monotonic clock (performance.timeOrigin +
    // now), which a wall clock stepped since the process started no longer matches.
    expect(
      Math.abs(a3.publishedAtUs / 1000 - (performance.timeOrigin + performance.now())),
    ).toBeLessThan(5_000);
    expect(Math.abs(a3.publishedAtUs / 1000 - Date.now())).toBeLessThan(3_600_000);
    expect(await store.getSnapshot('a')).toEqual({
      orderId: 'a',
      status: OrderStatus.Packed,
      lastSeq: 3,
      updatedAtUs: a3.publishedAtUs,
    });
    expect(store.getSnapshotSync('b')).toMatchObject({ lastSeq: 1, status: 'created' });
    expect(await store.getSnapshot('c')).toBeUndefined();
    expect(store.orderCount).toBe(2);
    expect(await store.readHistory('c', 0)).toBeUndefined();
  });

  it('answers the owner from the order state without building a snapshot', async () => {
    publishStatusSync(store, { orderId: 'a', status: OrderStatus.Created, ownerId: 'alice' });
    publishStatusSync(store, { orderId: 'a', status: OrderStatus.Shipped });
    const built = jest.spyOn(StreamState.prototype, 'snapshot');
    try {
      expect((await store.getOwnership('a'))?.ownerId).toBe('alice');
      expect(built).not.toHaveBeenCalled();
    } finally {
      built.mockRestore();
    }
  });

  it('keeps each order its last historySize events for resumes', async () => {
    const small = new InMemoryStreamStore({ domain: ORDER_DOMAIN, historySize: 2 });
    const a1 = publishStatusSync(small, { orderId: 'a', status: OrderStatus.Created });
    const a2 = publishStatusSync(small, { orderId: 'a', status: OrderStatus.Paid });
    const a3 = publishStatusSync(small, { orderId: 'a', status: OrderStatus.Packed });
    expect(await small.readHistory('a', 1)).toEqual([a2, a3]);
    expect(await small.readHistory('a', 3)).toEqual([]);
    // seq 1 is no longer kept: the caller resets the client instead.
    expect(await small.readHistory('a', 0)).toBeUndefined();
    expect(a1.seq).toBe(1);
    small.close();
  });

  it('NotFound for a first event that is not created, and nothing is published', async () => {
    const err: unknown = await publishStatus(store, {
      orderId: 'x',
      status: OrderStatus.Paid,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe(ErrorCode.NotFound);
    expect(seen).toEqual([]);
    expect(store.orderCount).toBe(0);
  });

  it('FailedPrecondition for a backward move or anything after a terminal status', () => {
    publishStatusSync(store, { orderId: 'a', status: OrderStatus.Created });
    publishStatusSync(store, { orderId: 'a', status: OrderStatus.Shipped });
    const code = (status: OrderStatus) => {
      try {
        publishStatusSync(store, { orderId: 'a', status });
      } catch (err) {
        return (err as GatewayError).code;
      }
      return undefined;
    };
    expect(code(OrderStatus.Paid)).toBe(ErrorCode.FailedPrecondition);
    expect(code(OrderStatus.Delivered)).toBeUndefined();
    expect(code(OrderStatus.Delivered)).toBe(ErrorCode.FailedPrecondition);
    expect(code(OrderStatus.Cancelled)).toBe(ErrorCode.FailedPrecondition);
    expect(store.getSnapshotSync('a')).toMatchObject({ lastSeq: 3, status: 'delivered' });
    expect(seen.map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  describe('retention of finished orders', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('forgets a terminal order after terminalRetentionMs; live orders stay', () => {
      const s = new InMemoryStreamStore({ domain: ORDER_DOMAIN, terminalRetentionMs: 1_000 });
      try {
        publishStatusSync(s, { orderId: 'done', status: OrderStatus.Created });
        publishStatusSync(s, { orderId: 'done', status: OrderStatus.Cancelled });
        publishStatusSync(s, { orderId: 'live', status: OrderStatus.Created });
        jest.advanceTimersByTime(999);
        expect(s.getSnapshotSync('done')).toBeDefined();
        jest.advanceTimersByTime(1);
        expect(s.getSnapshotSync('done')).toBeUndefined();
        expect(s.getSnapshotSync('live')).toBeDefined();
        expect(s.orderCount).toBe(1);
        // A forgotten id can start over.
        expect(publishStatusSync(s, { orderId: 'done', status: OrderStatus.Created }).seq).toBe(1);
      } finally {
        s.close();
      }
    });

    it('close() cancels pending forgets and completes the event stream', () => {
      const s = new InMemoryStreamStore({ domain: ORDER_DOMAIN, terminalRetentionMs: 1_000 });
      let completed = false;
      s.events$.subscribe({ complete: () => (completed = true) });
      publishStatusSync(s, { orderId: 'done', status: OrderStatus.Created });
      publishStatusSync(s, { orderId: 'done', status: OrderStatus.Delivered });
      s.close();
      expect(completed).toBe(true);
      expect(jest.getTimerCount()).toBe(0);
    });
  });

  describe('event model', () => {
    describeEventModel(async () => {
      const s = new InMemoryStreamStore({ domain: ORDER_DOMAIN });
      const events: OrderEvent[] = [];
      s.events$.subscribe((e) => events.push(e));
      return { store: s, seen: events, settle: async () => {}, close: async () => s.close() };
    });
  });
});
