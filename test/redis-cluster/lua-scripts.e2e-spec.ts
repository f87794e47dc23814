import {
  ORDER_DOMAIN,
  OrderStatus,
  publishStatus,
  type OrderEvent,
  type OrderSnapshot,
} from '@app/order-domain';
import { RedisStreamStore } from '@app/redis-store';
import { RedisCluster } from '../support/redis-cluster';
import { errorReplies, ordersOnEveryMaster } from './cluster-support';

/**
 * The store's scripts on Redis Cluster after the masters forgot them (SCRIPT FLUSH, as a
 * master does when it restarts or a replica takes over): each runs on the master of its
 * order's slot, whose connection sends the script's SHA, gets NOSCRIPT, and must send the
 * script again as EVAL to that same master. Every master's NOSCRIPT count proves its
 * publish and history read went that way.
 */
describe('Lua scripts on Redis Cluster after the masters forgot them', () => {
  let cluster: RedisCluster;
  let store: RedisStreamStore<OrderEvent, OrderSnapshot>;

  beforeAll(async () => {
    cluster = await RedisCluster.launch();
    store = new RedisStreamStore({
      domain: ORDER_DOMAIN,
      clusterNodes: cluster.seedNodes.split(','),
      reconnectMaxDelayMs: 50,
    });
    expect(await store.whenUp(10_000)).toBe(true);
  }, 30_000);
  afterAll(async () => {
    await store?.close();
    await cluster?.shutdown();
  });

  it('publishes and reads history on every master again', async () => {
    const orders = await ordersOnEveryMaster(cluster, 'flushed');
    for (const { orderId } of orders) {
      await publishStatus(store, { orderId, status: OrderStatus.Created });
      expect(await store.readHistory(orderId, 0)).toHaveLength(1);
    }

    const before = new Map<number, number>();
    for (const { master } of orders) {
      await cluster.command(master, 'SCRIPT', 'FLUSH');
      before.set(master, await errorReplies(cluster, master, 'NOSCRIPT'));
    }
    for (const { orderId, master } of orders) {
      const paid = await publishStatus(store, {
        orderId,
        status: OrderStatus.Paid,
        idempotencyKey: 'k',
      });
      expect(paid).toMatchObject({ seq: 2, previousStatus: OrderStatus.Created });
      expect((await store.readHistory(orderId, 0))?.map((e) => e.seq)).toEqual([1, 2]);
      expect(await errorReplies(cluster, master, 'NOSCRIPT')).toBe((before.get(master) ?? 0) + 2);
    }
  });
});
