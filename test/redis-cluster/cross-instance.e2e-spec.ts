import { OrderStatus } from '@app/order-domain';
import { orderStatusClient, type OrderStatusClient } from '../grpc/grpc-test-client';
import { restPublisher } from '../idempotency/publishers';
import { RedisCluster } from '../support/redis-cluster';
import { openSseH1 } from '../support/sse-stream';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ClientPool } from '../ws/orders-client';
import {
  allDone,
  errorReplies,
  ordersOnEveryMaster,
  problemsAgainstRedis,
  RetryingPublisher,
} from './cluster-support';
import { followOnEveryTransport, type Follower } from './followers';

const { Created, Paid, Packed, Shipped, OutForDelivery, Delivered } = OrderStatus;
const MIDDLE = [Paid, Packed, Shipped, OutForDelivery, 'tracking', 'tracking'] as const;

/**
 * Two service instances on a real Redis Cluster (3 masters, 3 replicas) through
 * REDIS_CLUSTER_NODES: what is published on A reaches B's clients on every transport,
 * for orders on every master, resumes work across instances, and both instances follow
 * the cluster when a slot moves under them (MOVED) or is half-way through a move (ASK).
 * Judged only by what clients receive, against the history Redis keeps.
 */
describe('two instances on Redis Cluster', () => {
  let cluster: RedisCluster;
  let a: TestApp;
  let b: TestApp;
  let grpcB: OrderStatusClient;
  let publisher: RetryingPublisher;
  const pool = new ClientPool();
  const followers: Follower[] = [];

  beforeAll(async () => {
    cluster = await RedisCluster.launch();
    const env = { REDIS_CLUSTER_NODES: cluster.seedNodes };
    a = await startTestApp(env);
    // A small ring on B: resumes from further back must be served from Redis history.
    b = await startTestApp({ ...env, BUS_RING_SIZE: '4' });
    grpcB = orderStatusClient(b.grpcAddress);
    publisher = new RetryingPublisher(a);
  }, 30_000);
  afterEach(async () => {
    for (const f of followers.splice(0)) f.close();
    await pool.closeAll();
  });
  afterAll(async () => {
    grpcB?.close();
    await a?.close();
    await b?.close();
    await cluster?.shutdown();
  });

  const follow = async (orderId: string, after = 0) => {
    const fs = await followOnEveryTransport(
      { httpUrl: b.httpUrl, grpc: grpcB, pool },
      orderId,
      after,
    );
    followers.push(...fs);
    return fs;
  };
  const reached = (fs: readonly Follower[], seq: number, timeoutMs = 5_000) =>
    waitFor(
      () => fs.every((f) => f.seen.some((s) => s.kind === 'event' && s.seq >= seq)),
      `every follower at seq ${seq}`,
      timeoutMs,
    ).catch((err: Error) => {
      const where = fs.map((f) => `${f.transport} ${JSON.stringify(f.seen.at(-1) ?? null)}`);
      throw new Error(`${err.message}: ${where.join('; ')}`);
    });

  it('publish on A: B delivers every order, on every master, on all four transports', async () => {
    const orders = await ordersOnEveryMaster(cluster, 'spread', 2);
    expect(new Set(orders.map((o) => o.master)).size).toBe(3);
    for (const { orderId } of orders) await publisher.publish(orderId, Created);
    const fs = (await Promise.all(orders.map(({ orderId }) => follow(orderId)))).flat();
    await reached(fs, 1);
    for (const status of [...MIDDLE, Delivered]) {
      await Promise.all(orders.map(({ orderId }) => publisher.publish(orderId, status)));
    }
    await allDone(fs);
    expect(await problemsAgainstRedis(a, fs)).toEqual([]);
    expect(fs.every((f) => f.seen.length === MIDDLE.length + 2)).toBe(true);
    await waitFor(() => b.bus.subscriberCount() === 0, 'B released every subscription');
  });

  it('resume on B from the last seq seen on A: nothing lost, nothing twice', async () => {
    const [{ orderId }] = await ordersOnEveryMaster(cluster, 'resume');
    await publisher.publish(orderId, Created);
    await publisher.publish(orderId, Paid);
    const onA = await openSseH1(`${a.httpUrl}/v1/orders/${orderId}/stream`);
    await onA.waitFor(() => onA.events().length === 2, 'two events on A');
    const lastSeen = onA.events().at(-1)?.seq as number;
    onA.close();
    // Published while the client is between instances; B's 4-event ring cannot cover them.
    await publisher.publish(orderId, Shipped);
    for (let i = 0; i < 7; i++) await publisher.publish(orderId, 'tracking');
    const fs = await follow(orderId, lastSeen);
    await publisher.publish(orderId, Delivered);
    await allDone(fs);
    expect(await problemsAgainstRedis(a, fs)).toEqual([]);
    expect(fs.map((f) => f.seen.length)).toEqual([9, 9, 9, 9]);
  });

  it('a slot moved after both instances started: they follow MOVED, live streams keep going', async () => {
    const [moved, other] = await ordersOnEveryMaster(cluster, 'moved');
    await publisher.publish(moved.orderId, Created);
    const before = await follow(moved.orderId);
    await reached(before, 1);
    const target = other.master;
    const movedBefore = await errorReplies(cluster, moved.master, 'MOVED');

    await cluster.openSlotMigration(moved.slot, target);
    await cluster.migrateKeys(moved.slot, target, await cluster.keysInSlot(moved.slot));
    await cluster.closeSlotMigration(moved.slot, target);
    expect((await cluster.masterOf(moved.slot)).master).toBe(target);

    // A's slot map is stale: its publish goes to the old owner first, which answers MOVED.
    // B's clients subscribed before the move must keep receiving, with no new subscriber
    // on B to make it notice.
    await publisher.publish(moved.orderId, Paid);
    await reached(before, 2);
    const after = await follow(moved.orderId);
    await publisher.publish(moved.orderId, Delivered);
    await allDone([...before, ...after]);
    expect(await problemsAgainstRedis(a, [...before, ...after])).toEqual([]);
    expect(await errorReplies(cluster, moved.master, 'MOVED')).toBeGreaterThan(movedBefore);
  });

  it('a slot half-way through a move: commands follow ASK to the importing node', async () => {
    const [asked, other] = await ordersOnEveryMaster(cluster, 'ask');
    await publisher.publish(asked.orderId, Created);
    const before = await follow(asked.orderId);
    await reached(before, 1);
    const target = other.master;
    const askBefore = await errorReplies(cluster, asked.master, 'ASK');
    const rest = restPublisher(a.httpUrl);

    // The order's keys move; the slot stays MIGRATING on its owner, IMPORTING on the target:
    // the owner answers ASK for them, the target serves them only after ASKING.
    await cluster.openSlotMigration(asked.slot, target);
    await cluster.migrateKeys(asked.slot, target, await cluster.keysInSlot(asked.slot));
    let during: Follower[] = [];
    let late: Follower[] = [];
    let refused;
    try {
      // Without an idempotency key the publish script touches only keys that moved.
      await a.publish(asked.orderId, Paid);
      // B's history reads follow ASK: new clients get seq 2 from the importing node.
      during = await follow(asked.orderId);
      await reached(during, 2);
      await a.publish(asked.orderId, Packed);
      expect(await errorReplies(cluster, asked.master, 'ASK')).toBeGreaterThan(askBefore);
      // Seq 3 reaches `during` only after the move ends (the live SPUBLISH ran on the
      // importing node, which no subscriber listens to: see the next test); clients that
      // arrive now read it from history, through ASK.
      late = await follow(asked.orderId, 2);
      await reached(late, 3);
      // With one, the script creates a key the slot does not have yet: Redis answers
      // TRYAGAIN until the move ends, and the publisher gets an explicit 503, not an event.
      refused = await rest.publish({ orderId: asked.orderId, status: Shipped, key: 'ask-1' });
    } finally {
      await cluster.closeSlotMigration(asked.slot, target);
    }
    expect(refused.code).toBe('unavailable');
    const retried = await rest.publish({ orderId: asked.orderId, status: Shipped, key: 'ask-1' });
    expect(retried.event?.seq).toBe(4);
    await publisher.publish(asked.orderId, Delivered);
    await allDone([...before, ...during, ...late]);
    expect(await problemsAgainstRedis(a, [...before, ...during, ...late])).toEqual([]);
  });

  // While a slot migrates, Redis serves its shard channels from the source, but the
  // publish script runs on the importing node after ASK, so its SPUBLISH reaches no
  // subscriber. When the move ends, Redis unsubscribes the source's subscribers
  // (unsolicited SUNSUBSCRIBE); ioredis re-forms its sharded subscribers and emits
  // 'subscribersReady', on which the store resyncs: the bus reads what it missed from
  // history, so clients get the event without waiting for a later one.
  it('events published during a slot move reach the clients already subscribed', async () => {
    const [moving, other] = await ordersOnEveryMaster(cluster, 'ask-live');
    await publisher.publish(moving.orderId, Created);
    const fs = await follow(moving.orderId);
    await reached(fs, 1);
    await cluster.openSlotMigration(moving.slot, other.master);
    await cluster.migrateKeys(moving.slot, other.master, await cluster.keysInSlot(moving.slot));
    try {
      await a.publish(moving.orderId, Paid);
    } finally {
      await cluster.closeSlotMigration(moving.slot, other.master);
    }
    await reached(fs, 2);
  });

  // When a move ends, the source sends its subscribers an unsolicited SUNSUBSCRIBE and
  // ioredis re-reads the slot map once, from a node picked at random. A node that has not
  // learnt the move yet (a replica, or a master the SETSLOTs have not reached) answers the
  // old map; the sharded subscribers then see no change and stay unsubscribed from the
  // slot, and ioredis re-reads the map on no timer by default: the slot's live events
  // stopped until the next topology change.
  // The store now re-reads the map every REDIS_CLUSTER_SLOTS_REFRESH_MS (2 s by default).
  it('live events keep reaching the clients after each of several slot moves', async () => {
    const [order] = await ordersOnEveryMaster(cluster, 'moves');
    await publisher.publish(order.orderId, Created);
    const fs = await follow(order.orderId);
    await reached(fs, 1);
    const masters = (await cluster.shards()).map((s) => s.master);
    for (const [i, status] of MIDDLE.entries()) {
      const from = (await cluster.masterOf(order.slot)).master;
      const to = masters[(masters.indexOf(from) + 1) % masters.length];
      await cluster.openSlotMigration(order.slot, to);
      await cluster.migrateKeys(order.slot, to, await cluster.keysInSlot(order.slot));
      // Every other move, the rest of the cluster learns late: the one re-read that
      // the unsubscription triggers then sees the old map.
      await cluster.closeSlotMigration(order.slot, to, i % 2 ? 'source-first' : 'target-first');
      await publisher.publish(order.orderId, status);
      await reached(fs, i + 2);
    }
  }, 60_000);
});
