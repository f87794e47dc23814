import { firstValueFrom, take, toArray } from 'rxjs';
import { ErrorCode, GatewayError } from '@app/contracts';
import {
  ORDER_DOMAIN,
  OrderStatus,
  publishStatus,
  publishTracking,
  type OrderEvent,
} from '@app/order-domain';
import { StoreResync } from '@app/store';
import { describeEventModel } from '../../libs/store/src/testing/event-model.store-spec';
import { RedisStreamStore } from '@app/redis-store';
import { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait-for';

/** The Redis store on its own, against a private redis-server. */
describe('RedisStreamStore', () => {
  let redis: RedisServer;
  const stores: RedisStreamStore[] = [];
  const open = async (opts: { historySize?: number; keyPrefix?: string } = {}) => {
    const store = new RedisStreamStore({
      domain: ORDER_DOMAIN,
      url: redis.url,
      reconnectMaxDelayMs: 50,
      ...opts,
    });
    stores.push(store);
    expect(await store.whenUp(5_000)).toBe(true);
    return store;
  };

  beforeAll(async () => {
    redis = await RedisServer.launch();
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await redis.start(); // a test that stopped it leaves it running for the next
  });
  afterAll(() => redis.shutdown());

  it('assigns seqs, keeps the snapshot and notifies the instances that watch the order', async () => {
    const a = await open();
    const b = await open();
    const c = await open();
    await b.watch('o1');
    await c.watch('other');
    const notForC: unknown[] = [];
    c.events$.subscribe((e) => notForC.push(e));
    const seen = firstValueFrom(b.events$.pipe(take(2), toArray()));
    const created = await publishStatus(a, { orderId: 'o1', status: OrderStatus.Created });
    const paid = await publishStatus(a, { orderId: 'o1', status: OrderStatus.Paid });
    expect(created.seq).toBe(1);
    expect(paid).toMatchObject({ seq: 2, status: OrderStatus.Paid, previousStatus: 'created' });
    expect(await seen).toEqual([created, paid]);
    // c follows another order: o1's events never reach it (per-order channels).
    expect(notForC).toEqual([]);
    c.unwatch('other');
    b.unwatch('o1');
    expect(await b.getSnapshot('o1')).toEqual({
      orderId: 'o1',
      status: OrderStatus.Paid,
      lastSeq: 2,
      updatedAtUs: paid.publishedAtUs,
    });
    expect(await b.getSnapshot('nope')).toBeUndefined();
  });

  it('enforces the life cycle with the same errors as the in-memory store', async () => {
    const a = await open();
    await expect(
      publishStatus(a, { orderId: 'o2', status: OrderStatus.Paid }),
    ).rejects.toMatchObject({
      code: ErrorCode.NotFound,
    });
    await publishStatus(a, { orderId: 'o2', status: OrderStatus.Created });
    await publishStatus(a, { orderId: 'o2', status: OrderStatus.Delivered });
    await expect(
      publishStatus(a, { orderId: 'o2', status: OrderStatus.Paid }),
    ).rejects.toMatchObject({
      code: ErrorCode.FailedPrecondition,
      message: 'order o2 cannot move from delivered to paid',
    });
    expect((await a.getSnapshot('o2'))?.lastSeq).toBe(2);
  });

  it('keeps extra command fields as snapshot attributes (additive fields, e.g. an owner)', async () => {
    const a = await open();
    await publishStatus(a, { orderId: 'o3', status: OrderStatus.Created, ownerId: 'alice' });
    await publishStatus(a, { orderId: 'o3', status: OrderStatus.Paid, ownerId: 'mallory' });
    // Set at creation only: ownership never changes.
    expect(await a.getSnapshot('o3')).toMatchObject({
      orderId: 'o3',
      lastSeq: 2,
      ownerId: 'alice',
    });
  });

  it('serves history after any seq still retained, and says when it is not', async () => {
    const a = await open({ historySize: 5 });
    await publishStatus(a, { orderId: 'o4', status: OrderStatus.Created });
    await publishStatus(a, { orderId: 'o4', status: OrderStatus.Shipped });
    for (let i = 0; i < 8; i++) {
      await publishTracking(a, { orderId: 'o4', location: { lat: i, lon: i }, etaMs: 1 + i });
    }
    // seqs 1..10, the last 5 (6..10) kept
    expect((await a.readHistory('o4', 7))?.map((e) => e.seq)).toEqual([8, 9, 10]);
    expect((await a.readHistory('o4', 5))?.map((e) => e.seq)).toEqual([6, 7, 8, 9, 10]);
    expect(await a.readHistory('o4', 4)).toBeUndefined();
    expect(await a.readHistory('o4', 10)).toEqual([]);
    const [e] = (await a.readHistory('o4', 9)) as OrderEvent[];
    expect(Number.isSafeInteger(e.publishedAtUs)).toBe(true);
  });

  it('concurrent publishes to one order from two instances: unique, gap-free seqs', async () => {
    const a = await open();
    const b = await open();
    await publishStatus(a, { orderId: 'hot', status: OrderStatus.Created });
    await publishStatus(a, { orderId: 'hot', status: OrderStatus.Shipped });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        publishTracking(i % 2 ? a : b, {
          orderId: 'hot',
          location: { lat: 1, lon: 2 },
          etaMs: i + 1,
        }),
      ),
    );
    const seqs = results.map((e) => e.seq).sort((x, y) => x - y);
    expect(seqs).toEqual(Array.from({ length: 200 }, (_, i) => i + 3));
    expect((await a.readHistory('hot', 0))?.map((e) => e.seq)).toEqual([1, 2, ...seqs]);
  });

  it('concurrent repeats of one status from two instances: exactly one is published', async () => {
    const a = await open();
    const b = await open();
    await publishStatus(a, { orderId: 'race', status: OrderStatus.Created });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        publishStatus(i % 2 ? a : b, { orderId: 'race', status: OrderStatus.Paid }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') {
        expect(r.reason).toMatchObject({ code: ErrorCode.FailedPrecondition });
      }
    }
    expect(await a.getSnapshot('race')).toMatchObject({ lastSeq: 2, status: 'paid' });
  });

  it('fails fast with Unavailable while Redis is down, reports down, and recovers', async () => {
    const a = await open();
    await publishStatus(a, { orderId: 'o5', status: OrderStatus.Created });
    const resyncs: StoreResync[] = [];
    a.resync$?.subscribe((r) => resyncs.push(r));
    await redis.stop();
    await waitFor(() => a.health() === 'down', 'the store to report down');
    const started = Date.now();
    const err: unknown = await publishStatus(a, { orderId: 'o5', status: OrderStatus.Paid }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe(ErrorCode.Unavailable);
    expect(Date.now() - started).toBeLessThan(500);
    await expect(a.getSnapshot('o5')).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    await redis.start();
    await waitFor(() => a.health() === 'up', 'the store to come back', 10_000);
    // Not persistent: the data (and its epoch) are gone, and the store says so.
    expect(resyncs).toEqual([StoreResync.DataLost]);
    expect(await a.getSnapshot('o5')).toBeUndefined();
  });

  describe('event model (the same cases as the in-memory store)', () => {
    describeEventModel(async () => {
      const store = await open();
      const seen: OrderEvent[] = [];
      store.events$.subscribe((e) => seen.push(e));
      // Routing store: only watched orders reach events$; the cases use fresh ids, so
      // watch every id they publish to before the first publish.
      const append = store.append.bind(store);
      const watched = new Set<string>();
      const watchFirst = async (orderId: string) => {
        if (watched.has(orderId)) return;
        watched.add(orderId);
        await store.watch(orderId);
      };
      store.append = async (draft, rule, options) => (
        await watchFirst(draft.orderId),
        append(draft, rule, options)
      );
      return {
        store,
        seen,
        settle: async (orderId) => {
          const lastSeq = (await store.getSnapshot(orderId))?.lastSeq ?? 0;
          await waitFor(
            () => seen.some((e) => e.orderId === orderId && e.seq === lastSeq),
            `the announcement of ${orderId} seq ${lastSeq}`,
          );
        },
        close: () => store.close(),
      };
    });
  });
});
