import { OrderStatus } from '@app/order-domain';
import { OtlpReceiver } from '../support/otlp-receiver';
import { RedisCluster } from '../support/redis-cluster';
import { openSseH1, type SseStream } from '../support/sse-stream';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ordersOnEveryMaster } from '../redis-cluster/cluster-support';
import {
  callerContext,
  only,
  restPublish,
  traceOf,
  tracingEnv,
  writesByTransport,
} from './tracing-support';

/**
 * The trace context survives Redis Cluster's sharded pub/sub: a publish on A and its
 * delivery on B are one trace, for an order on every master.
 */
describe('tracing across two instances on Redis Cluster', () => {
  let cluster: RedisCluster;
  let receiver: OtlpReceiver;
  let a: TestApp;
  let b: TestApp;
  const streams: SseStream[] = [];

  beforeAll(async () => {
    cluster = await RedisCluster.launch();
    receiver = await OtlpReceiver.start();
    const env = { REDIS_CLUSTER_NODES: cluster.seedNodes };
    a = await startTestApp({ ...env, ...tracingEnv(receiver, 'cluster-a') });
    b = await startTestApp({ ...env, ...tracingEnv(receiver, 'cluster-b') });
  }, 30_000);
  afterAll(async () => {
    for (const s of streams) s.close();
    await a?.close();
    await b?.close();
    await receiver?.close();
    await cluster?.shutdown();
  });

  it('publish on A, delivery on B: one trace for an order on every master', async () => {
    const orders = await ordersOnEveryMaster(cluster, 'tc', 1);
    for (const { orderId } of orders) {
      await a.createOrder(orderId);
      const sse = await openSseH1(
        `${b.httpUrl}/v1/orders/${orderId}/stream?after=1`,
        b.authHeaders,
      );
      streams.push(sse);
      // B's first subscriber on a master connects B to it (sharded pub/sub): seconds on a
      // loaded host (CI: more than 5).
      await waitFor(() => b.bus.subscriberCount(orderId) === 1, `B follows ${orderId}`, 15_000);
      const caller = callerContext();
      expect(
        (await restPublish(a, orderId, OrderStatus.Paid, { traceparent: caller.traceparent }))
          .statusCode,
      ).toBe(201);
      await sse.waitFor(() => sse.events().some((e) => e.seq === 2), `${orderId} on B`);

      const spans = await traceOf(
        receiver,
        caller.traceId,
        (s) => s.some((x) => x.name === 'deliver'),
        `${orderId}: publish, store and deliver`,
      );
      const publish = only(spans, 'publish', 'cluster-a');
      const store = only(spans, 'store', 'cluster-a');
      const deliver = only(spans, 'deliver', 'cluster-b');
      expect(publish.parentSpanId).toBe(caller.spanId);
      expect(store.parentSpanId).toBe(publish.spanId);
      expect(store.attributes['order_status.store']).toBe('redis-cluster');
      expect(deliver.parentSpanId).toBe(store.spanId);
      expect(writesByTransport(deliver)).toEqual({ sse: 1 });
      expect(Object.keys(sse.events().at(-1) ?? {})).toEqual([
        'orderId',
        'seq',
        'status',
        'previousStatus',
        'publishedAtUs',
      ]);
    }
  }, 90_000);
});
