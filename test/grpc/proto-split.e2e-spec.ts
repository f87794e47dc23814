import { join } from 'node:path';
import {
  credentials,
  loadPackageDefinition,
  status as GrpcCode,
  type ServiceClientConstructor,
} from '@grpc/grpc-js';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';
import {
  ORDER_STATUS_PROTO_PACKAGE,
  ORDER_STATUS_PROTO_PATH,
  ORDER_STATUS_SERVICE_NAME,
  PROTO_DIR,
  PROTO_LOADER_OPTIONS,
} from '@app/contracts';
import { OrderStatus, PROTO_STATUS, type ProtoSubscribeResponse } from '@app/order-domain';
import { DEFAULT_TEST_TOKEN } from '../support/auth';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { bearerInterceptor, collect, unary, type OrderStatusClient } from './grpc-test-client';

/** The contract as one file, before the envelope and the order domain were split. */
const SINGLE_FILE = join(__dirname, 'fixtures', 'order_status.single-file.proto');
const SERVICE = `${ORDER_STATUS_PROTO_PACKAGE}.${ORDER_STATUS_SERVICE_NAME}`;
const named = (message: string): string => `${ORDER_STATUS_PROTO_PACKAGE}.${message}`;

interface ProtoMethod {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestType: { type: { name: string } };
  responseType: { type: { name: string } };
}

/**
 * What the contract gained since the split, with new field numbers and names (the payload
 * domain's arm, its reset snapshot and its snapshot call): an old client never sees them.
 */
const ADDED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  [named('SubscribeResponse')]: ['payload'],
  [named('StreamReset')]: ['payloadSnapshot'],
};
const ADDED_CALLS = ['GetPayloadStream'];

interface MessageDescriptor {
  readonly field?: { readonly name: string; readonly number: number }[];
  readonly reservedRange?: { readonly start: number; readonly end: number }[];
  readonly reservedName?: string[];
}

/**
 * The field numbers each message of `pkg` reserves. @grpc/proto-loader gives a range's
 * end inclusive (`reserved 5;` is `{start: 5, end: 5}`), unlike descriptor.proto.
 */
function reservedNumbers(pkg: PackageDefinition): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const [name, def] of Object.entries(pkg)) {
    if (!('format' in def)) continue;
    const ranges = (def.type as MessageDescriptor).reservedRange ?? [];
    const numbers = ranges.flatMap(({ start, end }) =>
      Array.from({ length: end - start + 1 }, (_, i) => start + i),
    );
    if (numbers.length > 0) out.set(name, numbers);
  }
  return out;
}

/**
 * Every message and enum by full name, as its descriptor (names, numbers, types), without
 * the fields added since the split, the fields `removed` (by message: the numbers the new
 * file reserves), and the reserved declarations themselves.
 */
function typesOf(
  pkg: PackageDefinition,
  removed: ReadonlyMap<string, readonly number[]> = new Map(),
): Map<string, string> {
  const types = new Map<string, string>();
  for (const [name, def] of Object.entries(pkg)) {
    if (!('format' in def)) continue;
    const { reservedRange: _range, reservedName: _names, ...type } = def.type as MessageDescriptor;
    const added = ADDED_FIELDS[name] ?? [];
    const gone = removed.get(name) ?? [];
    const field = type.field?.filter((f) => !added.includes(f.name) && !gone.includes(f.number));
    types.set(name, JSON.stringify(field === undefined ? type : { ...type, field }));
  }
  return types;
}

/** The service's calls as the wire sees them (path, streaming, message names), but the added. */
function callsOf(pkg: PackageDefinition): unknown[] {
  const calls = Object.entries(pkg[SERVICE] as unknown as Record<string, ProtoMethod>);
  return calls
    .flatMap(([name, m]) => (ADDED_CALLS.includes(name) ? [] : [m]))
    .map((m) => ({
      path: m.path,
      requestStream: m.requestStream,
      responseStream: m.responseStream,
      request: m.requestType.type.name,
      response: m.responseType.type.name,
    }));
}

describe('the proto split into the envelope and order_domain.proto', () => {
  const before = loadSync(SINGLE_FILE, PROTO_LOADER_OPTIONS);
  const after = loadSync(ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS);

  // A field the new file reserves was removed on purpose: the load test's padding (fields
  // 5 of both events, padding_bytes of both publish requests) left the order contract for
  // the payload domain. Reserved, its number and name are never reused, so an old client
  // still reads every event (the field is absent) and may still send it (it is skipped).
  it('keeps every message, enum and field (names, numbers, types) of the single file, but those it reserves', () => {
    const reserved = reservedNumbers(after);
    expect(Object.fromEntries(reserved)).toEqual({
      [named('OrderStatusChanged')]: [5],
      [named('TrackingUpdated')]: [5],
      [named('UpdateStatusRequest')]: [3],
      [named('UpdateTrackingRequest')]: [4],
    });
    const was = typesOf(before, reserved);
    const is = typesOf(after);
    for (const [name, fields] of Object.entries(ADDED_FIELDS)) {
      const { field } = after[name].type as { field: { name: string }[] };
      expect(field.map((f) => f.name)).toEqual(expect.arrayContaining([...fields]));
    }
    expect(was.size).toBeGreaterThan(10);
    for (const [name, descriptor] of was) {
      expect({ name, descriptor: is.get(name) }).toEqual({ name, descriptor });
    }
  });

  it('keeps the service: the same call paths, streaming and messages', () => {
    expect(callsOf(after)).toEqual(callsOf(before));
  });

  it('has the order messages in order_domain.proto alone, the envelope in order_status.proto', () => {
    const domain = [...typesOf(loadSync(join(PROTO_DIR, 'order_domain.proto'))).keys()];
    expect(domain).toEqual(
      expect.arrayContaining(['OrderStatusChanged', 'TrackingUpdated', 'OrderSnapshot'].map(named)),
    );
    const envelope = ['SubscribeRequest', 'SubscribeResponse', 'StreamReset', 'Skipped'];
    expect(domain.filter((name) => envelope.map(named).includes(name))).toEqual([]);
  });

  describe('a client generated from the single file, against the service', () => {
    let app: TestApp;
    let client: OrderStatusClient;

    beforeAll(async () => {
      app = await startTestApp();
      const pkg = loadPackageDefinition(before) as {
        orderstatus: { v1: { OrderStatusService: ServiceClientConstructor } };
      };
      client = new pkg.orderstatus.v1.OrderStatusService(
        app.grpcAddress,
        credentials.createInsecure(),
        { interceptors: [bearerInterceptor(DEFAULT_TEST_TOKEN)] },
      ) as unknown as OrderStatusClient;
    });

    afterAll(async () => {
      client.close();
      await app.close();
    });

    // Protobuf skips a field the receiver does not know: the publish goes through as if
    // the filler were not there, and the event carries none (a production team expects an
    // old client to keep working; REST, which has no such rule, answers 400 instead).
    it('publishes for an old client that still sends padding_bytes, without any filler', async () => {
      const status = await unary(client.updateStatus.bind(client), {
        orderId: 'split-pad',
        status: PROTO_STATUS[OrderStatus.Created],
        paddingBytes: 100,
      });
      await app.publish('split-pad', OrderStatus.Shipped);
      const tracked = await unary(client.updateTracking.bind(client), {
        orderId: 'split-pad',
        location: { lat: 52.5, lon: 13.4 },
        etaMs: 1_700_000_000_000,
        paddingBytes: 100,
      });
      const events = [status.event, tracked.tracking] as unknown as { padding?: Buffer }[];
      expect(events.map((e) => e.padding?.length ?? 0)).toEqual([0, 0]);
      expect(status.event).toMatchObject({ orderId: 'split-pad', seq: 1 });
      expect(tracked.tracking).toMatchObject({ orderId: 'split-pad', seq: 3 });
      expect((await app.store.getSnapshot('split-pad'))?.lastSeq).toBe(3);
    });

    it('publishes and follows an order: status changes and tracking updates decode', async () => {
      await app.createOrder('split-1', OrderStatus.Paid, OrderStatus.Shipped);
      const stream = collect(client.subscribe({ orderId: 'split-1' }));
      await waitFor(() => stream.items.length === 3, 'replayed created, paid, shipped');
      const tracked = await unary(client.updateTracking.bind(client), {
        orderId: 'split-1',
        location: { lat: 52.5, lon: 13.4 },
        etaMs: 1_700_000_000_000,
      });
      expect(tracked.tracking.seq).toBe(4);
      await app.publish('split-1', OrderStatus.Delivered);

      const end = await stream.status;
      expect(end.code).toBe(GrpcCode.OK);
      const items: ProtoSubscribeResponse[] = stream.items;
      expect(items[3]).toMatchObject({
        tracking: {
          orderId: 'split-1',
          seq: 4,
          status: PROTO_STATUS[OrderStatus.Shipped],
          location: { lat: 52.5, lon: 13.4 },
          etaMs: 1_700_000_000_000,
        },
      });
      expect(items[4]).toMatchObject({
        event: {
          orderId: 'split-1',
          seq: 5,
          status: PROTO_STATUS[OrderStatus.Delivered],
          previousStatus: PROTO_STATUS[OrderStatus.Shipped],
        },
      });
    });
  });
});
