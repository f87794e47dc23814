import { loadSync } from '@grpc/proto-loader';
import fc from 'fast-check';
import {
  cursorAfter,
  type OrderSnapshot,
  type OrderStatusChanged,
  type StreamItem,
  type Tracking,
  type TrackingUpdated,
} from './order-events';
import { ORDER_STATUSES, OrderStatus } from './order-status';
import {
  eventFromProto,
  eventToProto,
  PROTO_STATUS,
  snapshotFromProto,
  snapshotToProto,
  statusFromProto,
  streamItemToProto,
  trackingFromProto,
  trackingToProto,
  type ProtoOrderStatusChanged,
  type ProtoTrackingUpdated,
} from './proto-codec';
import { ResetReason, SkipReason } from '@app/contracts/stream-envelope';
import { skippedFromProto } from '@app/contracts/stream-proto';
import {
  ORDER_STATUS_PROTO_PACKAGE,
  ORDER_STATUS_PROTO_PATH,
  ORDER_STATUS_SERVICE_NAME,
  PROTO_LOADER_OPTIONS,
} from '@app/contracts/proto-path';

// The real wire contract, loaded the way the server and the clients load it.
const pkg = loadSync(ORDER_STATUS_PROTO_PATH, { ...PROTO_LOADER_OPTIONS });
const service = pkg[`${ORDER_STATUS_PROTO_PACKAGE}.${ORDER_STATUS_SERVICE_NAME}`] as Record<
  string,
  {
    responseSerialize(value: unknown): Buffer;
    responseDeserialize(bytes: Buffer): unknown;
  }
>;

interface EnumValue {
  name: string;
  number: number;
}
function protoEnum(fullName: string): EnumValue[] {
  const def = pkg[fullName] as { format: string; type: { value: EnumValue[] } };
  expect(def.format).toBe('Protocol Buffer 3 EnumDescriptorProto');
  return def.type.value;
}

/** Serializes and parses a SubscribeResponse through protobuf, as gRPC does on the wire. */
function overTheWire(msg: unknown): unknown {
  return service.Subscribe.responseDeserialize(service.Subscribe.responseSerialize(msg));
}

const status = fc.constantFrom(...ORDER_STATUSES);
const evt: fc.Arbitrary<OrderStatusChanged> = fc
  .record({
    orderId: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/),
    seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    status,
    publishedAtUs: fc.maxSafeNat(),
    previousStatus: fc.option(status, { nil: undefined }),
    reason: fc.option(fc.string({ minLength: 1, maxLength: 40 }), { nil: undefined }),
  })
  .map(({ previousStatus, reason, ...e }) => ({
    ...e,
    ...(previousStatus !== undefined ? { previousStatus } : {}),
    ...(reason !== undefined ? { reason } : {}),
  }));
const tracking: fc.Arbitrary<Tracking> = fc.record({
  location: fc.record({
    lat: fc.double({ min: -90, max: 90, noNaN: true }),
    lon: fc.double({ min: -180, max: 180, noNaN: true }),
  }),
  etaMs: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
});
const trackingEvt: fc.Arbitrary<TrackingUpdated> = fc
  .record({
    orderId: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/),
    seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    status,
    publishedAtUs: fc.maxSafeNat(),
    tracking,
  })
  .map(({ tracking: t, ...e }) => ({ ...e, ...t }));
const snap: fc.Arbitrary<OrderSnapshot> = fc
  .record({
    orderId: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/),
    status,
    lastSeq: fc.maxSafeNat(),
    updatedAtUs: fc.maxSafeNat(),
    tracking: fc.option(tracking, { nil: undefined }),
    ownerId: fc.option(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/), { nil: undefined }),
  })
  .map(({ tracking: t, ownerId: o, ...s }) => ({
    ...s,
    ...(t !== undefined ? { tracking: t } : {}),
    ...(o !== undefined ? { ownerId: o } : {}),
  }));

describe('proto codec', () => {
  it('maps every status to its proto enum value by name, and back', () => {
    const values = protoEnum(`${ORDER_STATUS_PROTO_PACKAGE}.OrderStatus`);
    for (const s of ORDER_STATUSES) {
      const name = `ORDER_STATUS_${s.toUpperCase()}`;
      expect(values.find((v) => v.name === name)?.number).toBe(PROTO_STATUS[s]);
      expect(statusFromProto(PROTO_STATUS[s])).toBe(s);
    }
    // Every proto value but UNSPECIFIED has a domain status.
    expect(values.filter((v) => v.number !== 0)).toHaveLength(ORDER_STATUSES.length);
    expect(new Set(Object.values(PROTO_STATUS)).size).toBe(ORDER_STATUSES.length);
  });

  it.each([0, 8, -1, 1.5, '1', undefined, null])(
    'statusFromProto(%p) is undefined (UNSPECIFIED or unknown)',
    (v) => {
      expect(statusFromProto(v)).toBeUndefined();
    },
  );

  it('round-trips every event through eventToProto/eventFromProto', () => {
    fc.assert(
      fc.property(evt, (e) => {
        expect(eventFromProto(eventToProto(e))).toEqual(e);
      }),
    );
  });

  it('round-trips every event over the real protobuf wire format', () => {
    fc.assert(
      fc.property(evt, (e) => {
        const back = overTheWire(streamItemToProto({ kind: 'event', event: e })) as {
          event: ProtoOrderStatusChanged;
          kind: string;
        };
        expect(back.kind).toBe('event');
        expect(eventFromProto(back.event)).toEqual(e);
      }),
    );
  });

  it('writes only the fields an event has (no optional field set to a default)', () => {
    const e: OrderStatusChanged = {
      orderId: 'a',
      seq: 1,
      status: OrderStatus.Paid,
      publishedAtUs: 5,
    };
    expect(eventToProto(e)).toEqual({ orderId: 'a', seq: 1, status: 2, publishedAtUs: 5 });
  });

  it('eventFromProto accepts numeric strings for uint64 fields (longs as strings)', () => {
    const m = { orderId: 'a', seq: '7', status: 1, publishedAtUs: '123' };
    expect(eventFromProto(m as unknown as ProtoOrderStatusChanged)).toEqual({
      orderId: 'a',
      seq: 7,
      status: OrderStatus.Created,
      publishedAtUs: 123,
    });
  });

  it('rejects UNSPECIFIED and unknown statuses with a TypeError', () => {
    for (const bad of [0, 99]) {
      expect(() => eventFromProto({ orderId: 'a', seq: 1, status: bad, publishedAtUs: 0 })).toThrow(
        TypeError,
      );
      expect(() =>
        snapshotFromProto({ orderId: 'a', status: bad, lastSeq: 1, updatedAtUs: 0 }),
      ).toThrow(TypeError);
    }
  });

  it('round-trips every snapshot, also over the wire inside a reset', () => {
    fc.assert(
      fc.property(snap, (s) => {
        expect(snapshotFromProto(snapshotToProto(s))).toEqual(s);
        const item: StreamItem = {
          kind: 'reset',
          reset: { reason: ResetReason.BeyondRetention, snapshot: s },
        };
        const back = overTheWire(streamItemToProto(item)) as {
          reset: { snapshot: Parameters<typeof snapshotFromProto>[0] };
        };
        expect(snapshotFromProto(back.reset.snapshot)).toEqual(s);
      }),
    );
  });

  it('streamItemToProto sets exactly one side of the oneof', () => {
    const s: OrderSnapshot = {
      orderId: 'a',
      status: OrderStatus.Shipped,
      lastSeq: 9,
      updatedAtUs: 1,
    };
    const e: OrderStatusChanged = {
      orderId: 'a',
      seq: 9,
      status: OrderStatus.Shipped,
      publishedAtUs: 1,
    };
    expect(streamItemToProto({ kind: 'event', event: e })).toEqual({ event: eventToProto(e) });
    expect(
      streamItemToProto({
        kind: 'reset',
        reset: { reason: ResetReason.AheadOfLastSeq, snapshot: s },
      }),
    ).toEqual({ reset: { reason: 2, snapshot: snapshotToProto(s) } });
  });

  it('round-trips every tracking update over the real protobuf wire format', () => {
    fc.assert(
      fc.property(trackingEvt, (t) => {
        const back = overTheWire(streamItemToProto({ kind: 'tracking', tracking: t })) as {
          tracking: ProtoTrackingUpdated;
          event?: unknown;
        };
        expect(back.event).toBeUndefined();
        expect(trackingFromProto(back.tracking)).toEqual(t);
        expect(cursorAfter({ kind: 'tracking', tracking: t })).toBe(t.seq);
      }),
    );
  });

  it('writes seq and published_at_us of both event kinds under the same field numbers', () => {
    // A lean client reads only these two fields, whichever arm carries them.
    const common = { orderId: 'o', seq: 300, status: OrderStatus.Shipped, publishedAtUs: 5 };
    const tracked: TrackingUpdated = { ...common, location: { lat: 1, lon: 2 }, etaMs: 7 };
    const eventBytes = service.Subscribe.responseSerialize({ event: eventToProto(common) });
    const trackingBytes = service.Subscribe.responseSerialize({
      tracking: trackingToProto(tracked),
    });
    // Arm tag (field 1 or 4, length-delimited), length, then the same leading fields.
    expect(eventBytes[0]).toBe((1 << 3) | 2);
    expect(trackingBytes[0]).toBe((4 << 3) | 2);
    const head = eventBytes.subarray(2, eventBytes.length);
    expect(trackingBytes.subarray(2, 2 + head.length)).toEqual(head);
  });

  it('carries previous status and reason, and reads their proto3 defaults as absent', () => {
    const e: OrderStatusChanged = {
      orderId: 'o',
      seq: 4,
      status: OrderStatus.Cancelled,
      previousStatus: OrderStatus.Paid,
      publishedAtUs: 9,
      reason: 'customer changed their mind',
    };
    expect(eventToProto(e)).toMatchObject({ previousStatus: 2, reason: e.reason });
    const created: OrderStatusChanged = {
      orderId: 'o',
      seq: 1,
      status: OrderStatus.Created,
      publishedAtUs: 1,
    };
    const back = overTheWire({ event: eventToProto(created) }) as {
      event: ProtoOrderStatusChanged;
    };
    expect(back.event).toMatchObject({ previousStatus: 0, reason: '' });
    expect(eventFromProto(back.event)).toEqual(created);
  });

  it('maps every reset reason to a defined, non-UNSPECIFIED proto reason', () => {
    // A nested enum lives in its message's descriptor, not in the package definition.
    const resetMsg = pkg[`${ORDER_STATUS_PROTO_PACKAGE}.StreamReset`] as unknown as {
      type: { enumType: { name: string; value: EnumValue[] }[] };
    };
    const reasons = resetMsg.type.enumType.find((t) => t.name === 'Reason')?.value ?? [];
    expect(reasons.length).toBeGreaterThan(1);
    const byName = new Map(reasons.map((v) => [v.name, v.number]));
    const s: OrderSnapshot = { orderId: 'a', status: OrderStatus.Paid, lastSeq: 2, updatedAtUs: 0 };
    const reasonOf = (reason: ResetReason) => {
      const msg = streamItemToProto({ kind: 'reset', reset: { reason, snapshot: s } });
      return 'reset' in msg ? msg.reset.reason : undefined;
    };
    expect(reasonOf(ResetReason.BeyondRetention)).toBe(byName.get('REASON_BEYOND_RETENTION'));
    expect(reasonOf(ResetReason.AheadOfLastSeq)).toBe(byName.get('REASON_AHEAD_OF_LAST_SEQ'));
    expect(reasonOf(ResetReason.Gap)).toBe(byName.get('REASON_GAP'));
    for (const r of Object.values(ResetReason)) {
      expect([...byName.values()].filter((n) => n !== 0)).toContain(reasonOf(r));
    }
  });

  it('carries a skipped range over the wire, with a defined reason, and moves the cursor to its end', () => {
    const skippedMsg = pkg[`${ORDER_STATUS_PROTO_PACKAGE}.Skipped`] as unknown as {
      type: { enumType: { name: string; value: EnumValue[] }[] };
    };
    const reasons = skippedMsg.type.enumType.find((t) => t.name === 'Reason')?.value ?? [];
    const byName = new Map(reasons.map((v) => [v.name, v.number]));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER - 1_000 }),
        fc.nat(1_000),
        (fromSeq, extra) => {
          const item: StreamItem = {
            kind: 'skipped',
            skipped: { fromSeq, toSeq: fromSeq + extra, reason: SkipReason.Overflow },
          };
          const msg = streamItemToProto(item);
          expect(Object.keys(msg)).toEqual(['skipped']);
          const back = overTheWire(msg) as {
            skipped: Parameters<typeof skippedFromProto>[0];
            event?: unknown;
            reset?: unknown;
          };
          expect(back.event ?? undefined).toBeUndefined();
          expect(back.reset ?? undefined).toBeUndefined();
          expect(back.skipped.reason).toBe(byName.get('REASON_OVERFLOW'));
          expect(skippedFromProto(back.skipped)).toEqual(item.skipped);
          expect(cursorAfter(item)).toBe(fromSeq + extra);
        },
      ),
    );
  });

  it('finds the proto file and names the service that is in it', () => {
    expect(ORDER_STATUS_PROTO_PATH).toMatch(/proto[\\/]order_status\.proto$/);
    expect(Object.keys(service).sort()).toEqual([
      'GetOrder',
      'GetPayloadStream',
      'Subscribe',
      'UpdateStatus',
      'UpdateTracking',
    ]);
    const msg = pkg[`${ORDER_STATUS_PROTO_PACKAGE}.OrderStatusChanged`] as { format: string };
    expect(msg.format).toBe('Protocol Buffer 3 DescriptorProto');
  });
});
