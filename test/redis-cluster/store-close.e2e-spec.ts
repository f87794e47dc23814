import { setTimeout as sleep } from 'node:timers/promises';
import { ORDER_DOMAIN } from '@app/order-domain';
import { RedisStreamStore } from '@app/redis-store';
import { RedisCluster } from '../support/redis-cluster';
import { waitFor } from '../support/wait-for';

/**
 * Closing the store on Redis Cluster stops everything it started. ioredis's own periodic
 * slot-map read (`slotsRefreshInterval`) does not: a read in flight when the client
 * disconnects re-arms the timer when it completes, and the timer then re-arms itself
 * forever: a stopped service's process (or Jest) would never exit. The store runs its
 * own timer instead.
 * Read every millisecond here, so that most closes land while a read is in flight.
 */
describe('the Redis store on a cluster, closed', () => {
  let cluster: RedisCluster;

  beforeAll(async () => {
    cluster = await RedisCluster.launch();
  }, 30_000);
  afterAll(async () => {
    await cluster?.shutdown();
  });

  it('leaves no timer running, even when closed while it reads the slot map', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    for (let i = 0; i < 5; i++) {
      const store = new RedisStreamStore({
        domain: ORDER_DOMAIN,
        clusterNodes: cluster.seedNodes.split(','),
        clusterSlotsRefreshMs: 1,
      });
      expect(await store.whenUp(10_000)).toBe(true);
      await sleep(20 + i * 7);
      await store.close();
    }
    // A timer that re-arms itself is missing only while its read is in flight, so the
    // count must stay back over several polls, not touch it once.
    let polls = 0;
    await waitFor(
      () => (polls = timers() <= before ? polls + 1 : 0) >= 5,
      `Timeout handles back to ${before} over 5 polls`,
    );
  });
});
