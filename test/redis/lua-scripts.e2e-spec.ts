import { Redis } from 'ioredis';
import { Scope, type Principal } from '@app/auth';
import { ORDER_DOMAIN, OrderStatus, publishStatus } from '@app/order-domain';
import { isReplay } from '@app/store';
import { authStateKeys, RedisAuthState, RedisStreamStore } from '@app/redis-store';
import { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait-for';

const keys = authStateKeys('os');
const alice: Principal = {
  subject: 'alice',
  scopes: new Set([Scope.OrdersRead]),
  expiresAtMs: Date.now() + 3_600_000,
};

/**
 * Redis forgets its scripts when it restarts or fails over, and on SCRIPT FLUSH; a
 * connection that ran a script before then sends its SHA, Redis answers NOSCRIPT, and the
 * script must be sent again as EVAL for the call to succeed. SCRIPT FLUSH between two
 * calls on the same connection is that moment, made on purpose: every script of the store
 * and of the auth state runs before and after it, each after-call must work, and Redis's
 * own NOSCRIPT count proves each went through the EVALSHA that Redis refused (one each:
 * the EVAL that follows loads the script again).
 */
describe('Lua scripts after Redis forgot them (SCRIPT FLUSH)', () => {
  let redis: RedisServer;
  let admin: Redis;

  beforeAll(async () => {
    redis = await RedisServer.launch();
    admin = new Redis(redis.url);
  });
  afterEach(() => admin.flushall());
  afterAll(async () => {
    admin?.disconnect();
    await redis?.shutdown();
  });

  /** NOSCRIPT error replies Redis has sent so far (INFO errorstats). */
  const noscriptReplies = async (): Promise<number> =>
    Number(/errorstat_NOSCRIPT:count=(\d+)/.exec(await admin.info('errorstats'))?.[1] ?? 0);

  it('the order store publishes (with and without an idempotency key) and reads history', async () => {
    const store = new RedisStreamStore({
      domain: ORDER_DOMAIN,
      url: redis.url,
      reconnectMaxDelayMs: 50,
    });
    try {
      expect(await store.whenUp(5_000)).toBe(true);
      await publishStatus(store, { orderId: 'o1', status: OrderStatus.Created });
      expect(await store.readHistory('o1', 0)).toHaveLength(1);

      await admin.script('FLUSH');
      const before = await noscriptReplies();
      const paid = await publishStatus(store, { orderId: 'o1', status: OrderStatus.Paid });
      expect(paid).toMatchObject({ seq: 2, previousStatus: OrderStatus.Created });
      expect((await store.readHistory('o1', 0))?.map((e) => e.seq)).toEqual([1, 2]);
      expect(await noscriptReplies()).toBe(before + 2);

      // The idempotent publish is the same script with a third key.
      await admin.script('FLUSH');
      const packed = { orderId: 'o1', status: OrderStatus.Packed, idempotencyKey: 'k1' };
      const first = await publishStatus(store, packed);
      expect(first.seq).toBe(3);
      const repeat = await publishStatus(store, packed);
      expect(repeat).toEqual(first);
      expect(isReplay(repeat)).toBe(true);
      expect(await noscriptReplies()).toBe(before + 3);
    } finally {
      await store.close();
    }
  });

  it('the auth state counts rate-limit hits, connection slots and tickets', async () => {
    const state = new RedisAuthState({
      redis: { url: redis.url, reconnectMaxDelayMs: 50 },
      maxConnectionsPerPrincipal: 3,
      // Long, so the limiter's own renewals stay out of the counts below.
      connectionLeaseMs: 600_000,
      instanceId: 'i1',
    });
    const hit = () => state.rateStorage.increment('alice', 60_000, 10, 0, 'publish');
    const slots = () => admin.hget(keys.connections('alice'), 'n:i1');
    const tickets = () => admin.get(keys.ticketCount('alice'));
    /** Runs every auth-state script once; the best-effort ones are awaited by their effect. */
    const everyScript = async (hitsBefore: number) => {
      expect((await hit()).totalHits).toBe(hitsBefore + 1);
      const release = await state.connections.acquire('alice');
      expect(await slots()).toBe('2');
      const { ticket } = await state.tickets.issue(alice, 'order-1');
      expect(await tickets()).toBe('1');
      await state.tickets.redeem(ticket, 'order-1');
      await waitFor(async () => (await tickets()) === '0', 'the redeemed ticket uncounted');
      release();
      await waitFor(async () => (await slots()) === '1', 'the slot given back');
      await admin.hset(keys.connections('alice'), 'n:i1', 7);
      await state.connections.refresh();
      expect(await slots()).toBe('1');
    };
    try {
      await waitFor(() => state.client.status === 'ready', 'auth state ready');
      // One slot held throughout: a release never removes the subject's fields.
      await state.connections.acquire('alice');
      await everyScript(0);

      await admin.script('FLUSH');
      const before = await noscriptReplies();
      await everyScript(1);
      // Acquire, release, renew, count, uncount, rate limit: one NOSCRIPT each.
      expect(await noscriptReplies()).toBe(before + 6);
    } finally {
      await state.close();
    }
  });
});
