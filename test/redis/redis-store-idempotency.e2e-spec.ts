import { Redis } from 'ioredis';
import { ErrorCode, GatewayError } from '@app/contracts';
import { ORDER_DOMAIN, OrderStatus, publishStatus } from '@app/order-domain';
import { isReplay } from '@app/store';
import { RedisStreamStore, redisKeys } from '@app/redis-store';
import { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait-for';

const { Created, Paid, Packed } = OrderStatus;

/** The Redis store's idempotency record, on its own against a private redis-server. */
describe('RedisStreamStore idempotent publish', () => {
  let redis: RedisServer;
  let admin: Redis;
  const stores: RedisStreamStore[] = [];
  const open = async (opts: { idempotencyWindowMs?: number } = {}) => {
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
  const history = async (orderId: string) =>
    (await admin.lrange(redisKeys('os').history(orderId), 0, -1)).map(
      (json) => (JSON.parse(json) as { seq: number }).seq,
    );

  beforeAll(async () => {
    redis = await RedisServer.launch();
    admin = new Redis(redis.url);
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    admin.disconnect();
    await redis.shutdown();
  });

  it('answers a repeated key with the first event, from any instance, publishing nothing', async () => {
    const a = await open();
    const b = await open();
    await publishStatus(a, { orderId: 'r1', status: Created });
    const first = await publishStatus(a, { orderId: 'r1', status: Paid, idempotencyKey: 'k1' });
    const again = await publishStatus(b, { orderId: 'r1', status: Paid, idempotencyKey: 'k1' });
    expect(again).toEqual(first); // same seq, same publishedAtUs
    expect([isReplay(first), isReplay(again)]).toEqual([false, true]);
    expect(await history('r1')).toEqual([1, 2]);
    expect((await a.getSnapshot('r1'))?.lastSeq).toBe(2);
  });

  it('keeps the record under the order hash tag, for the window, and not after', async () => {
    const store = await open({ idempotencyWindowMs: 300 });
    await publishStatus(store, { orderId: 'r2', status: Created });
    await publishStatus(store, { orderId: 'r2', status: Paid, idempotencyKey: 'k1' });
    const key = redisKeys('os').idempotency('r2', 'k1');
    expect(key.startsWith('os:{r2}:idem:')).toBe(true);
    const ttl = await admin.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
    await waitFor(async () => (await admin.exists(key)) === 0, 'the record to expire');
    // Forgotten: the key is free again (the same status would now be a repeated status).
    const later = await publishStatus(store, {
      orderId: 'r2',
      status: Packed,
      idempotencyKey: 'k1',
    });
    expect([later.seq, isReplay(later)]).toEqual([3, false]);
  });

  it('scopes a key to its order', async () => {
    const store = await open();
    await publishStatus(store, { orderId: 'r3', status: Created });
    await publishStatus(store, { orderId: 'r4', status: Created });
    const x = await publishStatus(store, { orderId: 'r3', status: Paid, idempotencyKey: 'same' });
    const y = await publishStatus(store, { orderId: 'r4', status: Paid, idempotencyKey: 'same' });
    expect([x.orderId, x.seq, y.orderId, y.seq]).toEqual(['r3', 2, 'r4', 2]);
    expect(isReplay(y)).toBe(false);
  });

  it('refuses the same key with another status, and remembers nothing for a refused publish', async () => {
    const store = await open();
    await publishStatus(store, { orderId: 'r5', status: Created });
    await publishStatus(store, { orderId: 'r5', status: Paid, idempotencyKey: 'k1' });
    const err = (await publishStatus(store, {
      orderId: 'r5',
      status: Packed,
      idempotencyKey: 'k1',
    }).catch((e: unknown) => e)) as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.code).toBe(ErrorCode.FailedPrecondition);
    expect(await history('r5')).toEqual([1, 2]);

    const missing = (await publishStatus(store, {
      orderId: 'r6',
      status: Paid,
      idempotencyKey: 'k2',
    }).catch((e: unknown) => e)) as GatewayError;
    expect(missing.code).toBe(ErrorCode.NotFound);
    await publishStatus(store, { orderId: 'r6', status: Created });
    const now = await publishStatus(store, { orderId: 'r6', status: Paid, idempotencyKey: 'k2' });
    expect([now.seq, isReplay(now)]).toEqual([2, false]);
  });
});
