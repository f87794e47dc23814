import { loadSync, type MethodDefinition } from '@grpc/proto-loader';
import {
  itemToProto,
  ORDER_STATUS_PROTO_PACKAGE,
  ORDER_STATUS_PROTO_PATH,
  ORDER_STATUS_SERVICE_NAME,
  PROTO_LOADER_OPTIONS,
  ResetReason,
  SkipReason,
  type StreamItemOf,
} from '@app/contracts';
import { PAYLOAD_DOMAIN, type PayloadEvent, type PayloadSnapshot } from '@app/payload-domain';
import { SubscribeEncoding } from './subscribe-encoding';

// The payload domain is the fixture: its arm is a real proto message proto-loader encodes.
type PayloadItem = StreamItemOf<PayloadEvent, PayloadSnapshot>;

function subscribeMethod() {
  const pkg = loadSync(ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS);
  const service = pkg[`${ORDER_STATUS_PROTO_PACKAGE}.${ORDER_STATUS_SERVICE_NAME}`] as Record<
    string,
    MethodDefinition<object, object>
  >;
  return { pkg, method: service.Subscribe };
}

const payloadItem = (event: PayloadEvent): PayloadItem => ({ kind: 'event', event });

const EVENT: PayloadEvent = {
  orderId: 'p-ü',
  seq: 7,
  publishedAtUs: 1_764_470_000_000_001,
  payload: 'xyz',
};

const items: [string, PayloadItem][] = [
  ['a payload', payloadItem(EVENT)],
  [
    'a 60 KB payload',
    payloadItem({
      orderId: 'p-1',
      seq: 8,
      publishedAtUs: 1_764_470_000_000_002,
      payload: 'x'.repeat(60 * 1024),
    }),
  ],
  [
    'a reset',
    {
      kind: 'reset',
      reset: {
        reason: ResetReason.Gap,
        snapshot: { orderId: 'p-1', lastSeq: 9, updatedAtUs: 5 },
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
      const plain = method.responseSerialize(itemToProto(PAYLOAD_DOMAIN, item));
      const encoding = new SubscribeEncoding();
      encoding.install(pkg);
      expect(method.responseSerialize(encoding.message(PAYLOAD_DOMAIN, item)).equals(plain)).toBe(
        true,
      );
    },
  );

  it('encodes one event once for every call that writes it', () => {
    const { pkg, method } = subscribeMethod();
    const encoding = new SubscribeEncoding();
    encoding.install(pkg);
    const bytes = new Set<Buffer>();
    // The bus gives each subscriber its own item around the one published event.
    for (let i = 0; i < 1000; i++) {
      bytes.add(method.responseSerialize(encoding.message(PAYLOAD_DOMAIN, payloadItem(EVENT))));
    }
    expect(encoding.encodings).toBe(1);
    expect(bytes.size).toBe(1);
  });

  it('before install (no server), writes plain messages', () => {
    const encoding = new SubscribeEncoding();
    const [, item] = items[0];
    expect(encoding.message(PAYLOAD_DOMAIN, item)).toEqual(itemToProto(PAYLOAD_DOMAIN, item));
    expect(encoding.encodings).toBe(0);
  });
});
