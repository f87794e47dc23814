import { loadSync } from '@grpc/proto-loader';
import { ORDER_DOMAIN } from '@app/order-domain/order-domain';
import { OrderStatus } from '@app/order-domain/order-status';
import {
  ORDER_STATUS_PROTO_PACKAGE,
  ORDER_STATUS_PROTO_PATH,
  ORDER_STATUS_SERVICE_NAME,
  PROTO_LOADER_OPTIONS,
} from '@app/contracts/proto-path';
import { ResetReason } from '@app/contracts/stream-envelope';
import { itemFromProto, itemToProto, type ProtoResponse } from '@app/contracts/stream-proto';
import type { StreamItemOf } from '@app/contracts/stream-item';
import { PAYLOAD_DOMAIN } from './payload-domain';
import type { PayloadEvent, PayloadSnapshot } from './payload-events';
import { PAYLOAD_PROTO_CODEC } from './payload-proto-codec';

// The real wire contract, loaded the way the server and the clients load it.
const pkg = loadSync(ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS);
interface Method {
  responseSerialize(value: unknown): Buffer;
  responseDeserialize(bytes: Buffer): unknown;
  responseType: { type: { name: string } };
}
const service = pkg[`${ORDER_STATUS_PROTO_PACKAGE}.${ORDER_STATUS_SERVICE_NAME}`] as Record<
  string,
  Method
>;

type PayloadItem = StreamItemOf<PayloadEvent, PayloadSnapshot>;

const EVENT: PayloadEvent = {
  orderId: 'p-1',
  seq: 2 ** 40,
  publishedAtUs: 1_733_000_000_000_001,
  payload: 'x'.repeat(300),
};
const SNAPSHOT: PayloadSnapshot = { orderId: 'p-1', lastSeq: 7, updatedAtUs: 5, ownerId: 'c-1' };

/** A SubscribeResponse's bytes, as a Subscribe call writes them. */
const encode = (item: PayloadItem): Buffer =>
  service.Subscribe.responseSerialize(itemToProto(PAYLOAD_DOMAIN, item));
const decode = (bytes: Buffer): ProtoResponse =>
  service.Subscribe.responseDeserialize(bytes) as ProtoResponse;

describe('the payload domain on gRPC (proto/payload_domain.proto)', () => {
  it('carries an event in its own arm and reads it back, the payload byte for byte', () => {
    const item: PayloadItem = { kind: 'event', event: EVENT };
    const message = decode(encode(item));
    expect(message.kind).toBe('payload');
    expect((message.payload as { payload: Buffer }).payload).toHaveLength(300);
    expect(itemFromProto(PAYLOAD_DOMAIN, message)).toEqual(item);
  });

  it('shares the order events’ field numbers for the stream, seq and publish time', () => {
    // A reader of the order's event arm (the load test's lean reader) finds them in place.
    const bytes = encode({ kind: 'event', event: EVENT });
    const asOrderEvent = decode(
      Buffer.concat([Buffer.from([(1 << 3) | 2]), bytes.subarray(1)]),
    ).event;
    expect(asOrderEvent).toMatchObject({
      orderId: EVENT.orderId,
      seq: EVENT.seq,
      publishedAtUs: EVENT.publishedAtUs,
    });
  });

  it('carries a reset’s snapshot in its own StreamReset field, owner included', () => {
    const reset: PayloadItem = {
      kind: 'reset',
      reset: { reason: ResetReason.BeyondRetention, snapshot: SNAPSHOT },
    };
    const message = decode(encode(reset));
    expect(message.reset).toMatchObject({ snapshot: null, payloadSnapshot: SNAPSHOT });
    expect(itemFromProto(PAYLOAD_DOMAIN, message)).toEqual(reset);
    // proto3's '' is no owner.
    expect(PAYLOAD_PROTO_CODEC.snapshotFromProto({ ...SNAPSHOT, ownerId: '' })).toEqual({
      orderId: 'p-1',
      lastSeq: 7,
      updatedAtUs: 5,
    });
  });

  it('refuses what is not its own: an order’s event or an order’s reset', () => {
    const orderReset = service.Subscribe.responseSerialize(
      itemToProto(ORDER_DOMAIN, {
        kind: 'reset',
        reset: {
          reason: ResetReason.Gap,
          snapshot: { orderId: 'o-1', status: OrderStatus.Paid, lastSeq: 2, updatedAtUs: 1 },
        },
      }),
    );
    expect(() => itemFromProto(PAYLOAD_DOMAIN, decode(orderReset))).toThrow(TypeError);
    expect(() => PAYLOAD_PROTO_CODEC.eventFromProto('payload', { orderId: 'o-1' })).toThrow(
      'not a payload event',
    );
    // An arm it does not know (an order service's event) is skipped, not misread.
    expect(itemFromProto(PAYLOAD_DOMAIN, { event: { orderId: 'o-1' } })).toBeUndefined();
  });

  it('answers GetPayloadStream with its snapshot message', () => {
    const call = service.GetPayloadStream;
    expect(call.responseType.type.name).toBe('PayloadSnapshot');
    const back = call.responseDeserialize(
      call.responseSerialize(PAYLOAD_PROTO_CODEC.snapshotToProto(SNAPSHOT)),
    );
    expect(PAYLOAD_PROTO_CODEC.snapshotFromProto(back)).toEqual(SNAPSHOT);
  });
});
