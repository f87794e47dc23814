import { join } from 'node:path';
import { loadPackageDefinition, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { PROTO_LOADER_OPTIONS } from '@app/contracts';
import { InMemoryStreamStore } from '@app/store';
import { ORDER_DOMAIN, OrderStatus, publishStatus, publishTracking } from '@app/order-domain';
import { streamItemToProto } from '@app/order-domain/proto-codec';
import { payloadEventToProto } from '@app/payload-domain/payload-proto-codec';
import { steadyTracking } from '../../../apps/order-status/src/simulator/simulator-plan';
import { orderStatusClientCtor } from '../clients/grpc-connector';
import { PAYLOAD_AS_LARGE_AS_PLAIN_TRACKING, PAYLOAD_AS_LARGE_AS_TRACKING } from './steady';

/** The contract before the payload domain: its order events still had `padding = 5`. */
const OLD_CONTRACT = join(__dirname, '../../../test/grpc/fixtures/order_status.single-file.proto');
/** The filler the load test gave the steady tracking update (seed 001's ~117-byte events). */
const OLD_FILLER = 'x'.repeat(12);

describe('the default event size', () => {
  const tracked = async () => {
    const store = new InMemoryStreamStore({ domain: ORDER_DOMAIN });
    const orderId = 'lt1-123';
    for (const status of [OrderStatus.Created, OrderStatus.Shipped]) {
      await publishStatus(store, { orderId, status });
    }
    const tracking = await publishTracking(store, { orderId, ...steadyTracking(5, Date.now()) });
    store.close();
    return tracking;
  };

  it('puts a gRPC payload event on the wire as large as the padded tracking update', async () => {
    const tracking = await tracked();
    const old = loadPackageDefinition(loadSync(OLD_CONTRACT, PROTO_LOADER_OPTIONS)) as unknown as {
      orderstatus: { v1: { OrderStatusService: ServiceClientConstructor } };
    };
    const oldSerialize = old.orderstatus.v1.OrderStatusService.service.Subscribe.responseSerialize;
    const { tracking: plain } = streamItemToProto({ kind: 'tracking', tracking }) as {
      tracking: object;
    };
    const padded = oldSerialize({ tracking: { ...plain, padding: Buffer.from(OLD_FILLER) } });
    const { responseSerialize } = orderStatusClientCtor().service.Subscribe;
    const payload = payloadEventToProto({
      orderId: tracking.orderId,
      seq: tracking.seq,
      publishedAtUs: tracking.publishedAtUs,
      payload: 'x'.repeat(PAYLOAD_AS_LARGE_AS_TRACKING.protobuf),
    });
    expect(responseSerialize({ payload }).length).toBe(padded.length);
  });

  it('writes a JSON payload event as large as the tracking update, padded or not', async () => {
    const tracking = await tracked();
    const payloadOf = (bytes: number): string =>
      JSON.stringify({
        orderId: tracking.orderId,
        seq: tracking.seq,
        publishedAtUs: tracking.publishedAtUs,
        payload: 'x'.repeat(bytes),
      });
    // The padded update as the order contract wrote it: the filler last.
    const padded = JSON.stringify({ ...tracking, padding: OLD_FILLER });
    expect(payloadOf(PAYLOAD_AS_LARGE_AS_TRACKING.json).length).toBe(padded.length);
    expect(payloadOf(PAYLOAD_AS_LARGE_AS_PLAIN_TRACKING).length).toBe(
      JSON.stringify(tracking).length,
    );
  });
});
