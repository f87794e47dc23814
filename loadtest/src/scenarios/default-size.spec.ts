import { InMemoryOrderStore } from '@app/store';
import { OrderStatus, publishStatus, publishTracking } from '@app/order-domain';
import { streamItemToProto } from '@app/order-domain/proto-codec';
import { payloadEventToProto } from '@app/payload-domain/payload-proto-codec';
import { steadyTracking } from '../../../apps/order-status/src/simulator/simulator-plan';
import { orderStatusClientCtor } from '../clients/grpc-connector';
import { PADDING_FOR_117_BYTES, PAYLOAD_AS_LARGE_AS_TRACKING } from './steady';

describe('the default event size', () => {
  it('puts a gRPC payload event on the wire as large as the padded tracking update', async () => {
    const store = new InMemoryOrderStore();
    const orderId = 'lt1-123';
    for (const status of [OrderStatus.Created, OrderStatus.Shipped]) {
      await publishStatus(store, { orderId, status, paddingBytes: PADDING_FOR_117_BYTES });
    }
    const tracking = await publishTracking(store, {
      orderId,
      ...steadyTracking(5, Date.now()),
      paddingBytes: PADDING_FOR_117_BYTES,
    });
    store.close();
    const { responseSerialize } = orderStatusClientCtor().service.Subscribe;
    const payload = payloadEventToProto({
      orderId,
      seq: tracking.seq,
      publishedAtUs: tracking.publishedAtUs,
      payload: 'x'.repeat(PAYLOAD_AS_LARGE_AS_TRACKING.protobuf),
    });
    expect(responseSerialize({ payload }).length).toBe(
      responseSerialize(streamItemToProto({ kind: 'tracking', tracking })).length,
    );
  });
});
