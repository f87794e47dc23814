import { Redis } from 'ioredis';
import { ErrorCode } from '@app/contracts';
import { RedisStreamStore, redisKeys } from '@app/redis-store';
import { InMemoryStreamStore, isReplay, type StreamStore } from '@app/store';
import {
  PAYLOAD_DOMAIN,
  publishPayload,
  type PayloadEvent,
  type PayloadSnapshot,
} from '@app/payload-domain';
import { RedisServer } from '../support/redis-server';

// The stores are typed by the domain they are given and read everything they need from
// its descriptor: the payload domain's events go through the same append, script included.
const DOMAIN = PAYLOAD_DOMAIN;

describe('the payload domain through both stores (generic append)', () => {
  let redis: RedisServer;
  let admin: Redis;
  const stores: StreamStore<PayloadEvent, PayloadSnapshot>[] = [];

  beforeAll(async () => {
    redis = await RedisServer.launch();
    admin = new Redis(redis.url);
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close?.();
  });
  afterAll(async () => {
    admin.disconnect();
    await redis.shutdown();
  });

  const open: Record<
    'in-memory' | 'redis',
    () => Promise<StreamStore<PayloadEvent, PayloadSnapshot>>
  > = {
    'in-memory': async () => {
      const store = new InMemoryStreamStore({ domain: DOMAIN });
      stores.push(store);
      return store;
    },
    redis: async () => {
      const store = new RedisStreamStore({ url: redis.url, keyPrefix: 'pl', domain: DOMAIN });
      stores.push(store);
      expect(await store.whenUp(5_000)).toBe(true);
      return store;
    },
  };

  describe.each(['in-memory', 'redis'] as const)('%s', (kind) => {
    const id = (name: string) => `${kind}-${name}`;

    it('creates a stream with its first payload and numbers every later one', async () => {
      const store = await open[kind]();
      const seen: unknown[] = [];
      // A routing store (Redis) delivers only the streams it was asked for.
      await store.watch?.(id('a'));
      store.events$.subscribe((e) => seen.push(e));
      const events: PayloadEvent[] = [];
      for (const bytes of [0, 16, 1_000]) {
        events.push(await publishPayload(store, { orderId: id('a'), bytes }));
      }
      expect(events.map((e) => [e.seq, e.payload.length])).toEqual([
        [1, 0],
        [2, 16],
        [3, 1_000],
      ]);
      // The envelope first, then the domain's fields: no order field (no status, no
      // previousStatus) appears in another domain's events.
      expect(events.map((e) => Object.keys(e).join())).toEqual(
        Array(3).fill('orderId,seq,publishedAtUs,payload'),
      );
      expect((await store.readHistory(id('a'), 1))?.map((e) => e.seq)).toEqual([2, 3]);
      expect(await store.getSnapshot(id('a'))).toEqual({
        orderId: id('a'),
        lastSeq: 3,
        updatedAtUs: events[2].publishedAtUs,
      });
      const deadline = Date.now() + 5_000;
      while (seen.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(seen).toEqual(events);
    });

    it('keeps the owner of the append that created the stream', async () => {
      const store = await open[kind]();
      await publishPayload(store, { orderId: id('o'), bytes: 1, ownerId: 'alice' });
      await publishPayload(store, { orderId: id('o'), bytes: 1, ownerId: 'mallory' });
      expect((await store.getOwnership(id('o')))?.ownerId).toBe('alice');
      expect(await store.getOwnership(id('missing'))).toBeUndefined();
    });

    it('answers a repeated key with the first event, and refuses it for another payload', async () => {
      const store = await open[kind]();
      const first = await publishPayload(store, {
        orderId: id('k'),
        bytes: 8,
        idempotencyKey: 'k',
      });
      const again = await publishPayload(store, {
        orderId: id('k'),
        bytes: 8,
        idempotencyKey: 'k',
      });
      expect(again).toEqual(first);
      expect(isReplay(again)).toBe(true);
      await expect(
        publishPayload(store, { orderId: id('k'), bytes: 9, idempotencyKey: 'k' }),
      ).rejects.toMatchObject({ code: ErrorCode.FailedPrecondition });
      expect((await store.getSnapshot(id('k')))?.lastSeq).toBe(1);
    });

    it('refuses a size out of range with a typed error, publishing nothing', async () => {
      const store = await open[kind]();
      await expect(publishPayload(store, { orderId: id('r'), bytes: -1 })).rejects.toMatchObject({
        code: ErrorCode.InvalidArgument,
      });
      expect(await store.getSnapshot(id('r'))).toBeUndefined();
    });
  });

  it('keeps no order field in Redis: the script wrote what the rule said, nothing else', async () => {
    const store = await open.redis();
    await publishPayload(store, { orderId: 'h', bytes: 4 });
    await publishPayload(store, { orderId: 'h', bytes: 4 });
    expect(Object.keys(await admin.hgetall(redisKeys('pl').order('h'))).sort()).toEqual([
      'seq',
      'updatedAtUs',
    ]);
  });
});
