import { ErrorCode, GatewayError } from '@app/contracts';
import {
  ORDER_DOMAIN,
  OrderStatus,
  publishStatus,
  publishStatusSync,
  type OrderEvent,
  type OrderSnapshot,
} from '@app/order-domain';
import { InMemoryStreamStore, type InMemoryStreamStoreOptions } from './in-memory-stream-store';
import { isReplay } from './publish-replay';

const { Created, Paid, Packed, Shipped } = OrderStatus;

describe('InMemoryStreamStore idempotent publish', () => {
  let store: InMemoryStreamStore<OrderEvent, OrderSnapshot>;
  let seen: OrderEvent[];

  const open = (opts: Omit<InMemoryStreamStoreOptions, 'domain'> = {}) => {
    store = new InMemoryStreamStore({ domain: ORDER_DOMAIN, ...opts });
    seen = [];
    store.events$.subscribe((e) => seen.push(e));
    publishStatusSync(store, { orderId: 'a', status: Created });
    publishStatusSync(store, { orderId: 'b', status: Created });
  };
  afterEach(() => {
    store.close();
    jest.useRealTimers();
  });

  it('answers a repeated key with the first event (same seq and publishedAtUs), announcing nothing', async () => {
    open();
    const first = await publishStatus(store, { orderId: 'a', status: Paid, idempotencyKey: 'k1' });
    const again = await publishStatus(store, { orderId: 'a', status: Paid, idempotencyKey: 'k1' });
    const sync = publishStatusSync(store, { orderId: 'a', status: Paid, idempotencyKey: 'k1' });
    expect(isReplay(first)).toBe(false);
    expect(again).toEqual(first);
    expect(sync).toEqual(first);
    expect(isReplay(again)).toBe(true);
    expect(isReplay(sync)).toBe(true);
    expect(seen.filter((e) => e.orderId === 'a').map((e) => e.seq)).toEqual([1, 2]);
    expect((await store.getSnapshot('a'))?.lastSeq).toBe(2);
  });

  it('scopes a key to its order, and publishes without a key as before', () => {
    open();
    const a = publishStatusSync(store, { orderId: 'a', status: Paid, idempotencyKey: 'k1' });
    const b = publishStatusSync(store, { orderId: 'b', status: Paid, idempotencyKey: 'k1' });
    expect([a.orderId, a.seq, isReplay(a)]).toEqual(['a', 2, false]);
    expect([b.orderId, b.seq, isReplay(b)]).toEqual(['b', 2, false]);
    expect(publishStatusSync(store, { orderId: 'a', status: Packed }).seq).toBe(3);
    expect(publishStatusSync(store, { orderId: 'a', status: Shipped }).seq).toBe(4);
  });

  it('refuses the same key with another status (FailedPrecondition) and changes nothing', () => {
    open();
    publishStatusSync(store, { orderId: 'a', status: Paid, idempotencyKey: 'k1' });
    let err: unknown;
    try {
      publishStatusSync(store, { orderId: 'a', status: Packed, idempotencyKey: 'k1' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe(ErrorCode.FailedPrecondition);
    expect(store.getSnapshotSync('a')).toMatchObject({ status: Paid, lastSeq: 2 });
  });

  it('does not remember a publish that failed: a retry after the fix publishes', () => {
    open();
    expect(() =>
      publishStatusSync(store, { orderId: 'new', status: Paid, idempotencyKey: 'k1' }),
    ).toThrow(GatewayError);
    publishStatusSync(store, { orderId: 'new', status: Created });
    const e = publishStatusSync(store, { orderId: 'new', status: Paid, idempotencyKey: 'k1' });
    expect([e.seq, isReplay(e)]).toEqual([2, false]);
  });

  it('forgets a key after the window: a late retry is then a repeated status, never a second event', () => {
    jest.useFakeTimers();
    open({ idempotencyWindowMs: 1_000 });
    const first = publishStatusSync(store, { orderId: 'a', status: Paid, idempotencyKey: 'k1' });
    jest.advanceTimersByTime(999);
    expect(publishStatusSync(store, { orderId: 'a', status: Paid, idempotencyKey: 'k1' })).toEqual(
      first,
    );
    jest.advanceTimersByTime(1);
    expect(() =>
      publishStatusSync(store, { orderId: 'a', status: Paid, idempotencyKey: 'k1' }),
    ).toThrow(expect.objectContaining({ code: ErrorCode.FailedPrecondition }) as Error);
    // The key itself is free again.
    const later = publishStatusSync(store, { orderId: 'a', status: Packed, idempotencyKey: 'k1' });
    expect([later.seq, isReplay(later)]).toEqual([3, false]);
  });
});
