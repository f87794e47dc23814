import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { Scope, type Principal } from '@app/auth';
import { ErrorCode } from '@app/contracts';
import { RedisAuthState } from '@app/redis-store';
import { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait-for';

const alice: Principal = {
  subject: 'alice',
  scopes: new Set([Scope.OrdersRead]),
  expiresAtMs: Date.now() + 3_600_000,
};
/** Well above the command timeout: what "fails fast" is measured against. */
const FAIL_FAST_MS = 1_500;

/**
 * The Redis implementations on their own, against a private redis-server: the Lua
 * scripts' logic (sums over live instances, leases, repair, windows) and what each does
 * when Redis is gone or hangs (Unavailable, fast; close never waits for long).
 */
describe('shared auth state in Redis', () => {
  let redis: RedisServer;
  let admin: Redis;
  const states: RedisAuthState[] = [];

  const state = async (
    opts: Partial<ConstructorParameters<typeof RedisAuthState>[0]> = {},
    url = redis.url,
  ) => {
    const s = new RedisAuthState({
      redis: { url, commandTimeoutMs: 500, connectTimeoutMs: 500 },
      maxConnectionsPerPrincipal: 3,
      ...opts,
    });
    states.push(s);
    if (url === redis.url) await waitFor(() => s.client.status === 'ready', 'auth state ready');
    return s;
  };

  beforeAll(async () => {
    redis = await RedisServer.launch();
    admin = new Redis(redis.url);
  });
  afterEach(async () => {
    await Promise.all(states.splice(0).map((s) => s.close()));
    await admin.flushall();
  });
  afterAll(async () => {
    admin?.disconnect();
    await redis?.shutdown();
  });

  describe('connection counts', () => {
    it('sum every instance’s count; the one over the limit is refused with retry advice', async () => {
      const [one, two] = [await state({ instanceId: 'i1' }), await state({ instanceId: 'i2' })];
      const r1 = await one.connections.acquire('alice');
      await one.connections.acquire('alice');
      await two.connections.acquire('alice');
      await expect(two.connections.acquire('alice')).rejects.toMatchObject({
        code: ErrorCode.ResourceExhausted,
        retryAfterMs: 5_000,
      });
      await expect(one.connections.acquire('alice')).rejects.toMatchObject({
        code: ErrorCode.ResourceExhausted,
      });
      expect(await admin.hgetall('os:conns:{alice}')).toMatchObject({ 'n:i1': '2', 'n:i2': '1' });
      r1();
      r1();
      await waitFor(
        async () => (await admin.hget('os:conns:{alice}', 'n:i1')) === '1',
        'the release is counted once',
      );
      await expect(two.connections.acquire('alice')).resolves.toEqual(expect.any(Function));
      // Another subject has its own count; max 0 counts nothing at all.
      await expect(one.connections.acquire('bob')).resolves.toEqual(expect.any(Function));
      const unlimited = await state({ maxConnectionsPerPrincipal: 0 });
      await unlimited.connections.acquire('carol');
      expect(await admin.exists('os:conns:{carol}')).toBe(0);
    });

    it('the counts of an instance that stopped renewing stop counting one lease later, and are removed', async () => {
      const dead = await state({ instanceId: 'dead', connectionLeaseMs: 300 });
      const live = await state({ instanceId: 'live', connectionLeaseMs: 300 });
      for (let i = 0; i < 3; i++) await dead.connections.acquire('alice');
      await expect(live.connections.acquire('alice')).rejects.toMatchObject({
        code: ErrorCode.ResourceExhausted,
      });
      // Gone without a word: no release, no renewal, no cleanup.
      dead.client.disconnect();
      await waitFor(
        () =>
          live.connections.acquire('alice').then(
            () => true,
            () => false,
          ),
        'the dead instance’s slots to expire',
        3_000,
        50,
      );
      const fields = await admin.hgetall('os:conns:{alice}');
      expect(Object.keys(fields).sort()).toEqual(['n:live', 'u:live']);
      // The hash itself expires with the last lease.
      const ttl = await admin.pttl('os:conns:{alice}');
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(300);
    });

    it('a renewal sets the instance’s true count (a release lost in an outage, a count reaped)', async () => {
      const one = await state({ instanceId: 'i1' });
      await one.connections.acquire('alice');
      await one.connections.acquire('alice');
      await admin.hset('os:conns:{alice}', 'n:i1', '3');
      await one.connections.refresh();
      expect(await admin.hget('os:conns:{alice}', 'n:i1')).toBe('2');
      await admin.del('os:conns:{alice}');
      await one.connections.refresh();
      expect(await admin.hget('os:conns:{alice}', 'n:i1')).toBe('2');
    });

    it('close removes the instance’s counts', async () => {
      const one = await state({ instanceId: 'i1' });
      await one.connections.acquire('alice');
      await one.close();
      expect(await admin.exists('os:conns:{alice}')).toBe(0);
    });
  });

  describe('stream tickets', () => {
    it('redeem once across stores; bounded per subject; expire with their ttl', async () => {
      const [one, two] = [
        await state({ maxTicketsPerSubject: 2 }),
        await state({ maxTicketsPerSubject: 2 }),
      ];
      const t1 = await one.tickets.issue(alice, 'o-1');
      const t2 = await two.tickets.issue(alice, 'o-1');
      await expect(one.tickets.issue(alice, 'o-1')).rejects.toMatchObject({
        code: ErrorCode.ResourceExhausted,
      });
      const back = await two.tickets.redeem(t1.ticket, 'o-1');
      expect(back).toEqual(alice);
      await expect(one.tickets.redeem(t1.ticket, 'o-1')).rejects.toThrow(
        'stream ticket unknown, used or expired',
      );
      // Redeeming gave the subject's count back.
      await one.tickets.issue(alice, 'o-1');
      await expect(one.tickets.redeem(t2.ticket, 'o-2')).rejects.toThrow(/another order/);
      await expect(one.tickets.redeem(t2.ticket, 'o-1')).rejects.toThrow(/unknown, used/);
      await expect(one.tickets.redeem('../../not-a-ticket', 'o-1')).rejects.toMatchObject({
        code: ErrorCode.Unauthenticated,
      });

      const short = await state({ ticketTtlMs: 100 });
      const t3 = await short.tickets.issue(alice, 'o-1');
      expect(await admin.pttl(`os:ticket:{${t3.ticket}}`)).toBeLessThanOrEqual(100);
      await waitFor(async () => (await admin.exists(`os:ticket:{${t3.ticket}}`)) === 0, 'expiry');
      await expect(short.tickets.redeem(t3.ticket, 'o-1')).rejects.toThrow(/unknown, used/);
    });
  });

  describe('rate limits', () => {
    it('a fixed window shared by every storage, blocked past the limit until it ends', async () => {
      const [one, two] = [await state(), await state()];
      const hit = (s: RedisAuthState) => s.rateStorage.increment('alice', 1_000, 2, 1_000, 'pub');
      expect((await hit(one)).isBlocked).toBe(false);
      expect((await hit(two)).isBlocked).toBe(false);
      const blocked = await hit(one);
      expect(blocked).toMatchObject({ isBlocked: true, totalHits: 3, timeToBlockExpire: 1 });
      expect((await hit(two)).isBlocked).toBe(true);
      expect((await two.rateStorage.increment('bob', 1_000, 2, 1_000, 'pub')).isBlocked).toBe(
        false,
      );
      await waitFor(async () => !(await hit(two)).isBlocked, 'the window to end', 3_000, 100);
    });
  });

  describe('Redis unreachable', () => {
    it('answers Unavailable fast on every operation, and closes without waiting', async () => {
      const down = await RedisServer.launch();
      await down.stop();
      const s = await state({}, down.url);
      const started = Date.now();
      const unavailable = { code: ErrorCode.Unavailable };
      await expect(s.connections.acquire('alice')).rejects.toMatchObject(unavailable);
      await expect(s.tickets.issue(alice, 'o-1')).rejects.toMatchObject(unavailable);
      await expect(s.tickets.redeem('a'.repeat(43), 'o-1')).rejects.toMatchObject(unavailable);
      await expect(s.rateStorage.increment('alice', 1_000, 2, 1_000, 'pub')).rejects.toMatchObject(
        unavailable,
      );
      await s.close();
      expect(Date.now() - started).toBeLessThan(FAIL_FAST_MS);
      await down.shutdown();
    });

    it('a Redis that accepts connections and never answers: Unavailable within the timeouts', async () => {
      const sockets = new Set<Socket>();
      const silent: Server = createServer((socket) => sockets.add(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const { port } = silent.address() as { port: number };
      try {
        const s = await state({}, `redis://127.0.0.1:${port}`);
        const started = Date.now();
        await expect(s.connections.acquire('alice')).rejects.toMatchObject({
          code: ErrorCode.Unavailable,
        });
        await expect(s.tickets.issue(alice, 'o-1')).rejects.toMatchObject({
          code: ErrorCode.Unavailable,
        });
        await s.close();
        expect(Date.now() - started).toBeLessThan(FAIL_FAST_MS * 2);
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => silent.close(resolve));
      }
    });
  });
});
