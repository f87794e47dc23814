/**
 * The event model's rules, as one set of cases every store must pass on the order domain: the in-memory
 * store runs them as a unit spec, the Redis store against a real redis-server (e2e). One
 * set, so the two stores cannot drift apart. Named `*.store-spec.ts`: jest runs it only
 * through those two specs, and the library build leaves it out like every spec.
 */
import { ErrorCode, GatewayError } from '@app/contracts';
import {
  isTrackingUpdate,
  OrderStatus,
  publishStatus,
  publishTracking,
  type OrderEvent,
  type OrderSnapshot,
  type OrderStatusChanged,
  type TrackingUpdated,
} from '@app/order-domain';
import type { StreamStore } from '../stream-store';
import { isReplay } from '../publish-replay';

export interface StoreUnderTest {
  readonly store: StreamStore<OrderEvent, OrderSnapshot>;
  /** Everything the store announced on `events$` since it was made. */
  readonly seen: OrderEvent[];
  /**
   * Resolves once `seen` holds every event of `orderId` published so far (a shared
   * store announces through pub/sub, after the publish has answered).
   */
  settle(orderId: string): Promise<void>;
  close(): Promise<void>;
}

const HERE = { lat: 52.520008, lon: 13.404954 };
const THERE = { lat: -33.8688, lon: 151.2093 };
const ETA = 1_800_000_000_000;

async function codeOf(p: Promise<unknown>): Promise<ErrorCode | undefined> {
  try {
    await p;
  } catch (err) {
    if (err instanceof GatewayError) return err.code;
    throw err;
  }
  return undefined;
}

let counter = 0;
/** A fresh order id per case (a shared Redis keeps what earlier cases wrote). */
function orderId(): string {
  counter += 1;
  return `em-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

export function describeEventModel(make: () => Promise<StoreUnderTest>): void {
  let t: StoreUnderTest;
  let store: StreamStore<OrderEvent, OrderSnapshot>;

  beforeEach(async () => {
    t = await make();
    store = t.store;
  });
  afterEach(() => t.close());

  async function shipped(id: string): Promise<void> {
    await publishStatus(store, { orderId: id, status: OrderStatus.Created });
    await publishStatus(store, { orderId: id, status: OrderStatus.Shipped });
  }

  it('a status change names the status it left; the first one names none', async () => {
    const id = orderId();
    const created = await publishStatus(store, { orderId: id, status: OrderStatus.Created });
    const paid = await publishStatus(store, { orderId: id, status: OrderStatus.Paid });
    const shippedEvent = await publishStatus(store, { orderId: id, status: OrderStatus.Shipped });
    expect(created).not.toHaveProperty('previousStatus');
    expect(paid).toMatchObject({ seq: 2, status: 'paid', previousStatus: 'created' });
    expect(shippedEvent).toMatchObject({ seq: 3, status: 'shipped', previousStatus: 'paid' });
    // The stored history and the announced events are the same objects' JSON.
    expect(await store.readHistory(id, 0)).toEqual([created, paid, shippedEvent]);
  });

  it("answers an order's owner as its snapshot does, and nothing for an unknown order", async () => {
    const owned = orderId();
    const ownerless = orderId();
    await publishStatus(store, { orderId: owned, status: OrderStatus.Created, ownerId: 'alice' });
    await shipped(ownerless);
    // After a tracking update too: the owner comes from the creation, not the newest event.
    await publishStatus(store, { orderId: owned, status: OrderStatus.Shipped });
    await publishTracking(store, { orderId: owned, location: HERE, etaMs: ETA });
    const ownership = await store.getOwnership(owned);
    expect(ownership?.ownerId).toBe('alice');
    expect(ownership?.ownerId).toBe((await store.getSnapshot(owned))?.ownerId);
    const none = await store.getOwnership(ownerless);
    expect(none).toBeDefined();
    expect(none?.ownerId).toBeUndefined();
    expect(await store.getOwnership(orderId())).toBeUndefined();
  });

  it('refuses a repeated status with FailedPrecondition and publishes nothing', async () => {
    const id = orderId();
    await publishStatus(store, { orderId: id, status: OrderStatus.Created });
    await publishStatus(store, { orderId: id, status: OrderStatus.Paid });
    await t.settle(id);
    const before = t.seen.filter((e) => e.orderId === id).length;
    await expect(
      publishStatus(store, { orderId: id, status: OrderStatus.Paid }),
    ).rejects.toMatchObject({
      code: ErrorCode.FailedPrecondition,
      message: `order ${id} is already paid: a status change must change the status`,
    });
    expect(await codeOf(publishStatus(store, { orderId: id, status: OrderStatus.Created }))).toBe(
      ErrorCode.FailedPrecondition,
    );
    expect(await store.getSnapshot(id)).toMatchObject({ lastSeq: 2, status: 'paid' });
    await t.settle(id);
    expect(t.seen.filter((e) => e.orderId === id)).toHaveLength(before);
  });

  it('carries a cancellation reason, and refuses one on any other status', async () => {
    const id = orderId();
    await publishStatus(store, { orderId: id, status: OrderStatus.Created });
    expect(
      await codeOf(publishStatus(store, { orderId: id, status: OrderStatus.Paid, reason: 'why' })),
    ).toBe(ErrorCode.InvalidArgument);
    expect(
      await codeOf(
        publishStatus(store, { orderId: id, status: OrderStatus.Cancelled, reason: 'bad\nreason' }),
      ),
    ).toBe(ErrorCode.InvalidArgument);
    const reason = 'Adresse unzustellbar "Hof 2"';
    const cancelled = await publishStatus(store, {
      orderId: id,
      status: OrderStatus.Cancelled,
      reason,
    });
    expect(cancelled).toEqual({
      orderId: id,
      seq: 2,
      status: 'cancelled',
      previousStatus: 'created',
      publishedAtUs: cancelled.publishedAtUs,
      reason,
    });
    expect(await store.readHistory(id, 1)).toEqual([cancelled]);
  });

  it('publishes tracking updates on the same seqs while shipped or out for delivery', async () => {
    const id = orderId();
    await shipped(id);
    const t1 = await publishTracking(store, { orderId: id, location: HERE, etaMs: ETA });
    const out = await publishStatus(store, { orderId: id, status: OrderStatus.OutForDelivery });
    const t2 = await publishTracking(store, {
      orderId: id,
      location: THERE,
      etaMs: ETA + 1,
    });
    expect(t1).toEqual({
      orderId: id,
      seq: 3,
      status: 'shipped',
      publishedAtUs: t1.publishedAtUs,
      location: HERE,
      etaMs: ETA,
    });
    expect(out).toMatchObject({ seq: 4, previousStatus: 'shipped' });
    expect(t2).toMatchObject({ seq: 5, status: 'out_for_delivery', location: THERE });
    const history = (await store.readHistory(id, 2)) ?? [];
    expect(history).toEqual([t1, out, t2]);
    expect(history.map(isTrackingUpdate)).toEqual([true, false, true]);
    // The same JSON field order from every store (the bytes on the wire, also as stored).
    expect(history.map((e) => Object.keys(e).join())).toEqual([
      'orderId,seq,status,publishedAtUs,location,etaMs',
      'orderId,seq,status,previousStatus,publishedAtUs',
      'orderId,seq,status,publishedAtUs,location,etaMs',
    ]);
    await t.settle(id);
    expect(t.seen.filter((e) => e.orderId === id).slice(2)).toEqual([t1, out, t2]);
    // The snapshot keeps the status and the newest tracking, and counts every seq.
    expect(await store.getSnapshot(id)).toMatchObject({
      status: 'out_for_delivery',
      lastSeq: 5,
      updatedAtUs: t2.publishedAtUs,
      tracking: { location: THERE, etaMs: ETA + 1 },
    });
  });

  it('refuses tracking before shipping and after a terminal status (FailedPrecondition)', async () => {
    const id = orderId();
    expect(await codeOf(publishTracking(store, { orderId: id, location: HERE, etaMs: ETA }))).toBe(
      ErrorCode.NotFound,
    );
    await publishStatus(store, { orderId: id, status: OrderStatus.Created });
    await expect(
      publishTracking(store, { orderId: id, location: HERE, etaMs: ETA }),
    ).rejects.toMatchObject({
      code: ErrorCode.FailedPrecondition,
      message: `order ${id} is created: tracking updates are accepted while shipped or out_for_delivery`,
    });
    await publishStatus(store, { orderId: id, status: OrderStatus.Shipped });
    await publishStatus(store, { orderId: id, status: OrderStatus.Delivered });
    expect(await codeOf(publishTracking(store, { orderId: id, location: HERE, etaMs: ETA }))).toBe(
      ErrorCode.FailedPrecondition,
    );
    expect(await store.getSnapshot(id)).toMatchObject({ lastSeq: 3, status: 'delivered' });
  });

  it('refuses a location or an ETA out of range with InvalidArgument', async () => {
    const id = orderId();
    await shipped(id);
    expect(
      await codeOf(
        publishTracking(store, { orderId: id, location: { lat: 91, lon: 0 }, etaMs: 1 }),
      ),
    ).toBe(ErrorCode.InvalidArgument);
    expect(await codeOf(publishTracking(store, { orderId: id, location: HERE, etaMs: 0 }))).toBe(
      ErrorCode.InvalidArgument,
    );
    expect(await store.getSnapshot(id)).toMatchObject({ lastSeq: 2 });
  });

  it('replays a repeated key of either kind, never publishing twice', async () => {
    const id = orderId();
    await publishStatus(store, { orderId: id, status: OrderStatus.Created });
    const first = await publishStatus(store, {
      orderId: id,
      status: OrderStatus.Shipped,
      idempotencyKey: 'k-status',
    });
    const again = await publishStatus(store, {
      orderId: id,
      status: OrderStatus.Shipped,
      idempotencyKey: 'k-status',
    });
    expect(again).toEqual(first);
    expect(isReplay(again)).toBe(true);
    expect(isReplay(first)).toBe(false);
    // Without the key the same request is a repeated status: refused.
    expect(await codeOf(publishStatus(store, { orderId: id, status: OrderStatus.Shipped }))).toBe(
      ErrorCode.FailedPrecondition,
    );
    const tFirst: TrackingUpdated = await publishTracking(store, {
      orderId: id,
      location: HERE,
      etaMs: ETA,
      idempotencyKey: 'k-track',
    });
    const tAgain = await publishTracking(store, {
      orderId: id,
      location: HERE,
      etaMs: ETA,
      idempotencyKey: 'k-track',
    });
    expect(tAgain).toEqual(tFirst);
    expect(isReplay(tAgain)).toBe(true);
    // A key names one request: another update, or the other kind, is refused.
    expect(
      await codeOf(
        publishTracking(store, {
          orderId: id,
          location: THERE,
          etaMs: ETA,
          idempotencyKey: 'k-track',
        }),
      ),
    ).toBe(ErrorCode.FailedPrecondition);
    expect(
      await codeOf(
        publishStatus(store, {
          orderId: id,
          status: OrderStatus.Delivered,
          idempotencyKey: 'k-track',
        }),
      ),
    ).toBe(ErrorCode.FailedPrecondition);
    expect(
      await codeOf(
        publishTracking(store, {
          orderId: id,
          location: HERE,
          etaMs: ETA,
          idempotencyKey: 'k-status',
        }),
      ),
    ).toBe(ErrorCode.FailedPrecondition);
    await t.settle(id);
    const mine: OrderEvent[] = t.seen.filter((e) => e.orderId === id);
    expect(mine.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect((mine[1] as OrderStatusChanged).status).toBe('shipped');
  });
}
