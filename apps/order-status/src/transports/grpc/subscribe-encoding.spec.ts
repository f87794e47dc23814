import { loadSync, type MethodDefinition } from '@grpc/proto-loader';
import {
  itemOf,
  ORDER_STATUS_PROTO_PACKAGE,
  ORDER_STATUS_PROTO_PATH,
  ORDER_STATUS_SERVICE_NAME,
  OrderStatus,
  PROTO_LOADER_OPTIONS,
  ResetReason,
  SkipReason,
  streamItemToProto,
  type StreamItem,
} from '@app/contracts';
import { SubscribeEncoding } from './subscribe-encoding';

function subscribeMethod() {
  const pkg = loadSync(ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS);
  const service = pkg[`${ORDER_STATUS_PROTO_PACKAGE}.${ORDER_STATUS_SERVICE_NAME}`] as Record<
    string,
    MethodDefinition<object, object>
  >;
  return { pkg, method: service.Subscribe };
}

const items: [string, StreamItem][] = [
  [
    'a status change',
    itemOf({
      orderId: 'o-ü',
      seq: 7,
      status: OrderStatus.Paid,
      previousStatus: OrderStatus.Created,
      publishedAtUs: 1_764_470_000_000_001,
      padding: 'xyz',
    }),
  ],
  [
    'a tracking update',
    itemOf({
      orderId: 'o-1',
      seq: 8,
      status: OrderStatus.Shipped,
      publishedAtUs: 1_764_470_000_000_002,
      location: { lat: 52.5, lon: 13.4 },
      etaMs: 1_764_473_600_000,
    }),
  ],
  [
    'a reset',
    {
      kind: 'reset',
      reset: {
        reason: ResetReason.Gap,
        snapshot: { orderId: 'o-1', status: OrderStatus.Paid, lastSeq: 9, updatedAtUs: 5 },
      },
    },
  ],
  [
    'a skipped range',
    { kind: 'skipped', skipped: { fromSeq: 3, toSeq: 8, reason: SkipReason.Overflow } },
  ],
];

describe('SubscribeEncoding', () => {
  it.each(items)(
    '%s: the installed serializer gives the bytes the plain serializer gave',
    (_name, item) => {
      const { pkg, method } = subscribeMethod();
      const plain = method.responseSerialize(streamItemToProto(item));
      const encoding = new SubscribeEncoding();
      encoding.install(pkg);
      expect(method.responseSerialize(encoding.message(item)).equals(plain)).toBe(true);
    },
  );

  it('encodes one event once for every call that writes it', () => {
    const { pkg, method } = subscribeMethod();
    const encoding = new SubscribeEncoding();
    encoding.install(pkg);
    const [, item] = items[0];
    const event = item.kind === 'event' ? item.event : undefined;
    const bytes = new Set<Buffer>();
    // The bus gives each subscriber its own item around the one published event.
    for (let i = 0; i < 1000; i++) {
      bytes.add(method.responseSerialize(encoding.message(itemOf(event!))));
    }
    expect(encoding.encodings).toBe(1);
    expect(bytes.size).toBe(1);
  });

  it('before install (no server), writes plain messages', () => {
    const encoding = new SubscribeEncoding();
    const [, item] = items[0];
    expect(encoding.message(item)).toEqual(streamItemToProto(item));
    expect(encoding.encodings).toBe(0);
  });
});
