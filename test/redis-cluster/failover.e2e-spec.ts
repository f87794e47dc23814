import { OrderStatus, type OrderEvent } from '@app/order-domain';
import { orderStatusClient, type OrderStatusClient } from '../grpc/grpc-test-client';
import { RedisCluster } from '../support/redis-cluster';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ClientPool } from '../ws/orders-client';
import {
  allDone,
  ordersOnEveryMaster,
  problemsAgainstRedis,
  RetryingPublisher,
} from './cluster-support';
import { followOnEveryTransport, type Follower } from './followers';

const { Created, Shipped, Delivered } = OrderStatus;
/** @default 500 rounds at most in one publishing run (a bound, not a target) */
const MAX_ROUNDS = 500;

/**
 * A master fails over while two instances stream its orders' events to clients on all
 * four transports (on both instances) and a publisher keeps publishing through A. After
 * the cluster settles and every order is delivered, each client must have every event
 * once, in order, exactly as Redis now keeps it, or an explicit reset where Redis really
 * lost what the client had been sent: never a silent gap, a duplicate, or an event Redis
 * no longer has.
 */
describe('Redis Cluster failover under running streams', () => {
  let cluster: RedisCluster;
  let a: TestApp;
  let b: TestApp;
  let grpcA: OrderStatusClient;
  let grpcB: OrderStatusClient;
  let publisher: RetryingPublisher;
  const pool = new ClientPool();
  const followers: Follower[] = [];

  beforeAll(async () => {
    cluster = await RedisCluster.launch();
    const env = { REDIS_CLUSTER_NODES: cluster.seedNodes, BUS_RING_SIZE: '8' };
    a = await startTestApp(env);
    b = await startTestApp(env);
    grpcA = orderStatusClient(a.grpcAddress);
    grpcB = orderStatusClient(b.grpcAddress);
    publisher = new RetryingPublisher(a);
  }, 30_000);
  afterEach(async () => {
    for (const f of followers.splice(0)) f.close();
    await pool.closeAll();
  });
  afterAll(async () => {
    grpcA?.close();
    grpcB?.close();
    await a?.close();
    await b?.close();
    await cluster?.shutdown();
  });

  /** Orders on every master, created, with followers on both instances on every transport. */
  async function streaming(prefix: string): Promise<{ orderId: string; master: number }[]> {
    const orders = await ordersOnEveryMaster(cluster, prefix);
    for (const { orderId } of orders) {
      await publisher.publish(orderId, Created);
      await publisher.publish(orderId, Shipped);
    }
    for (const { orderId } of orders) {
      followers.push(
        ...(await followOnEveryTransport({ httpUrl: a.httpUrl, grpc: grpcA, pool }, orderId)),
        ...(await followOnEveryTransport({ httpUrl: b.httpUrl, grpc: grpcB, pool }, orderId)),
      );
    }
    await waitFor(
      () => followers.every((f) => f.seen.length > 0),
      'every follower has the created event',
    );
    return orders;
  }

  /** Publishes one event to every order per round until stopped; `rounds` counts them. */
  function publishing(orderIds: readonly string[]) {
    const run = { rounds: 0, stopped: false, done: Promise.resolve() };
    run.done = (async () => {
      while (!run.stopped && run.rounds < MAX_ROUNDS) {
        await Promise.all(orderIds.map((id) => publisher.publish(id, 'tracking')));
        run.rounds++;
      }
    })();
    const atRound = (n: number) => waitFor(() => run.rounds >= n, `publishing round ${n}`, 15_000);
    return { run, atRound };
  }

  async function finish(orderIds: readonly string[]): Promise<string[]> {
    for (const id of orderIds) await publisher.publish(id, Delivered);
    await allDone(followers, 20_000);
    return problemsAgainstRedis(a, followers);
  }

  /** The shard serving the `index`th slot range (each test takes another one). */
  async function shardAt(index: number, orders: readonly { orderId: string; master: number }[]) {
    const shard = (await cluster.shards())[index];
    const victim = orders.find((o) => o.master === shard.master);
    if (!victim) throw new Error(`no order on master ${shard.master}`);
    return { ...shard, victim: victim.orderId };
  }

  it('CLUSTER FAILOVER on a replica: every client gets every event once, no reset', async () => {
    const orders = await streaming('manual');
    const ids = orders.map((o) => o.orderId);
    const shard = await shardAt(0, orders);
    const { run, atRound } = publishing(ids);
    await atRound(3);
    await cluster.failover(shard.replicas[0]);
    await atRound(run.rounds + 3);
    run.stopped = true;
    await run.done;

    expect(await finish(ids)).toEqual([]);
    // A manual failover loses nothing, so nobody may have been reset.
    expect(followers.filter((f) => f.seen.some((s) => s.kind === 'reset'))).toEqual([]);
  });

  it('a master killed while publishing: 503s then the replica takes over, every client complete', async () => {
    const orders = await streaming('killed');
    const ids = orders.map((o) => o.orderId);
    const shard = await shardAt(1, orders);
    const { run, atRound } = publishing(ids);
    await atRound(3);
    const retriedBefore = publisher.retried;
    await cluster.kill(shard.master);
    await cluster.waitPromoted(shard.replicas[0]);
    await atRound(run.rounds + 3);
    run.stopped = true;
    await run.done;

    expect(await finish(ids)).toEqual([]);
    // The publisher really ran into the outage (CLUSTERDOWN / a dead node: 503, retried).
    expect(publisher.retried).toBeGreaterThan(retriedBefore);
  });

  // A master that dies with writes its replica never got: the new master hands those
  // seqs to new events. The store resyncs on the topology change ('-node',
  // 'subscribersReady'), and the bus's catch-up compares the event it delivered last
  // with Redis's (by publish time, since the seq alone cannot tell) and resets every
  // stream whose events Redis lost. Long-poll holds no subscription between polls: a
  // poll after the failover resumes by seq alone, and nothing on the server knows the
  // client's events 6..9 are not Redis's: a known limitation (the resume point would have
  // to carry the last event's identity), so long-poll clients are left out of the check.
  it('a master killed with writes its replica never got: explicit reset or complete sequence', async () => {
    const orders = await streaming('lost');
    const ids = orders.map((o) => o.orderId);
    const shard = await shardAt(2, orders);
    const replica = shard.replicas[0];
    const { run, atRound } = publishing(ids);
    await atRound(3);

    // Make the loss certain rather than a matter of timing: the replica is frozen and cut
    // off, the master acknowledges (and delivers) events only it has, then dies.
    cluster.pause(replica);
    const lost: OrderEvent[] = [];
    try {
      await cluster.command(shard.master, 'CLIENT', 'KILL', 'TYPE', 'replica');
      for (let i = 0; i < 3; i++) lost.push(await a.track(shard.victim));
      await cluster.kill(shard.master);
    } finally {
      cluster.resume(replica);
    }
    await cluster.waitPromoted(replica);
    await atRound(run.rounds + 3);
    run.stopped = true;
    await run.done;

    // Redis really lost those events: their seqs now hold other events.
    const history = (await a.store.readHistory(shard.victim, 0)) ?? [];
    const kept = (e: OrderEvent) =>
      history.some((h) => h.seq === e.seq && h.publishedAtUs === e.publishedAtUs);
    expect(lost.filter(kept)).toEqual([]);
    const problems = await finish(ids);
    expect(problems.filter((p) => !p.startsWith('long-poll'))).toEqual([]);
  });
});
