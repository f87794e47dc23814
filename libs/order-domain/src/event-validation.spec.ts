import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { ErrorCode, GatewayError } from '@app/contracts/gateway-error';
import {
  cursorAfter,
  eventOf,
  isTrackingUpdate,
  itemOf,
  snapshotAfter,
  type OrderStatusChanged,
  type TrackingUpdated,
} from './order-events';
import { OrderStatus } from './order-status';
import { PublishStatusDto } from './publish-status.dto';
import { PublishTrackingDto } from './publish-tracking.dto';
import {
  CANCEL_REASON_MAX_LENGTH,
  MAX_ETA_MS,
  parseStatusReason,
  parseTracking,
} from './validation';

function invalidArgument(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe(ErrorCode.InvalidArgument);
    return (err as GatewayError).message;
  }
  throw new Error('expected an InvalidArgument');
}

function messages(errors: ValidationError[]): string[] {
  return errors.flatMap((e) => [
    ...Object.values(e.constraints ?? {}),
    ...messages(e.children ?? []),
  ]);
}

function errorsOf<T extends object>(cls: new () => T, body: object): string[] {
  return messages(validateSync(plainToInstance(cls, body)));
}

const status: OrderStatusChanged = {
  orderId: 'o1',
  seq: 4,
  status: OrderStatus.Shipped,
  previousStatus: OrderStatus.Packed,
  publishedAtUs: 10,
};
const tracking: TrackingUpdated = {
  orderId: 'o1',
  seq: 5,
  status: OrderStatus.Shipped,
  publishedAtUs: 11,
  location: { lat: 52.52, lon: 13.405 },
  etaMs: 1_800_000_000_000,
};

describe('event kinds', () => {
  it('tells a tracking update from a status change and wraps each in its own item', () => {
    expect(isTrackingUpdate(tracking)).toBe(true);
    expect(isTrackingUpdate(status)).toBe(false);
    expect(itemOf(status)).toEqual({ kind: 'event', event: status });
    expect(itemOf(tracking)).toEqual({ kind: 'tracking', tracking });
    expect(eventOf(itemOf(tracking))).toBe(tracking);
    expect(cursorAfter(itemOf(tracking))).toBe(5);
  });

  it('builds the snapshot after either kind, keeping the newest tracking', () => {
    const afterStatus = snapshotAfter(undefined, status);
    expect(afterStatus).toEqual({
      orderId: 'o1',
      status: OrderStatus.Shipped,
      lastSeq: 4,
      updatedAtUs: 10,
    });
    const afterTracking = snapshotAfter(afterStatus, tracking);
    expect(afterTracking).toEqual({
      ...afterStatus,
      lastSeq: 5,
      updatedAtUs: 11,
      tracking: { location: tracking.location, etaMs: tracking.etaMs },
    });
    const delivered: OrderStatusChanged = {
      ...status,
      seq: 6,
      status: OrderStatus.Delivered,
      previousStatus: OrderStatus.Shipped,
      publishedAtUs: 12,
    };
    expect(snapshotAfter(afterTracking, delivered).tracking).toEqual(afterTracking.tracking);
  });

  it('carries the owner when given; absent optional fields are absent, in one key order', () => {
    // Snapshots travel as JSON (resets, GET /v1/orders/:id) and are compared by readers:
    // no `tracking: undefined` or `ownerId: undefined` keys, and the same order of keys.
    const plain = snapshotAfter(undefined, status);
    expect(Object.keys(plain)).toEqual(['orderId', 'status', 'lastSeq', 'updatedAtUs']);
    const owned = snapshotAfter(plain, tracking, 'alice');
    expect(Object.keys(owned)).toEqual([
      'orderId',
      'status',
      'lastSeq',
      'updatedAtUs',
      'tracking',
      'ownerId',
    ]);
    expect(owned.ownerId).toBe('alice');
    expect(Object.keys(snapshotAfter(undefined, status, 'bob'))).toEqual([
      'orderId',
      'status',
      'lastSeq',
      'updatedAtUs',
      'ownerId',
    ]);
    // The owner is not inherited from `previous`: the caller passes it each time.
    expect('ownerId' in snapshotAfter(owned, tracking)).toBe(false);
  });
});

describe('parseStatusReason', () => {
  it('accepts a printable reason on cancellation, and no reason on any status', () => {
    expect(parseStatusReason(OrderStatus.Cancelled, 'Kunde hat storniert 🙂')).toBe(
      'Kunde hat storniert 🙂',
    );
    expect(parseStatusReason(OrderStatus.Cancelled, 'x'.repeat(CANCEL_REASON_MAX_LENGTH))).toBe(
      'x'.repeat(CANCEL_REASON_MAX_LENGTH),
    );
    expect(parseStatusReason(OrderStatus.Paid, undefined)).toBeUndefined();
  });

  it('refuses a reason on any other status', () => {
    expect(invalidArgument(() => parseStatusReason(OrderStatus.Paid, 'why'))).toContain(
      'only accepted with status cancelled',
    );
  });

  it.each([
    ['empty', ''],
    ['too long', 'x'.repeat(CANCEL_REASON_MAX_LENGTH + 1)],
    ['a newline', 'line\nbreak'],
    ['a NUL', 'a\u0000b'],
    ['an escape sequence', '\u001b[31mred'],
    ['a bidi override', 'abc\u202edef'],
    ['a lone surrogate', 'a\ud800b'],
    ['not a string', 42],
  ])('refuses %s', (_name, reason) => {
    expect(invalidArgument(() => parseStatusReason(OrderStatus.Cancelled, reason))).toContain(
      'printable',
    );
  });
});

describe('parseTracking', () => {
  it('accepts the edges of the ranges', () => {
    expect(parseTracking({ lat: -90, lon: 180 }, 1)).toEqual({
      location: { lat: -90, lon: 180 },
      etaMs: 1,
    });
    expect(parseTracking({ lat: 90, lon: -180, extra: 1 }, MAX_ETA_MS)).toEqual({
      location: { lat: 90, lon: -180 },
      etaMs: MAX_ETA_MS,
    });
  });

  it.each([
    [null],
    ['52.5,13.4'],
    [{ lat: 91, lon: 0 }],
    [{ lat: 0, lon: -180.5 }],
    [{ lat: Number.NaN, lon: 0 }],
    [{ lat: 0, lon: Infinity }],
    [{ lat: '1', lon: 0 }],
    [{ lat: 0 }],
  ])('refuses location %p', (location) => {
    expect(invalidArgument(() => parseTracking(location, 1))).toContain('location');
  });

  it.each([[0], [-1], [1.5], [MAX_ETA_MS + 1], ['1700000000000'], [undefined]])(
    'refuses etaMs %p',
    (eta) => {
      expect(invalidArgument(() => parseTracking({ lat: 0, lon: 0 }, eta))).toContain('etaMs');
    },
  );
});

describe('PublishStatusDto reason', () => {
  it('accepts a printable reason', () => {
    expect(errorsOf(PublishStatusDto, { status: 'cancelled', reason: 'out of stock' })).toEqual([]);
  });

  it.each([[''], ['x'.repeat(CANCEL_REASON_MAX_LENGTH + 1)], ['a\nb'], [7]])(
    'refuses reason %p',
    (reason) => {
      expect(errorsOf(PublishStatusDto, { status: 'cancelled', reason }).join()).toContain(
        'reason must be',
      );
    },
  );
});

describe('PublishTrackingDto', () => {
  it('accepts a location and an ETA', () => {
    expect(
      errorsOf(PublishTrackingDto, {
        location: { lat: 48.1, lon: 11.6 },
        etaMs: 1_800_000_000_000,
      }),
    ).toEqual([]);
  });

  it.each([
    [{ etaMs: 1 }, 'location'],
    [{ location: 'here', etaMs: 1 }, 'location'],
    [{ location: { lat: 100, lon: 0 }, etaMs: 1 }, 'location'],
    [{ location: { lat: 0 }, etaMs: 1 }, 'location'],
    [{ location: { lat: 0, lon: 0 } }, 'etaMs'],
    [{ location: { lat: 0, lon: 0 }, etaMs: 0 }, 'etaMs'],
    [{ location: { lat: 0, lon: 0 }, etaMs: 2.5 }, 'etaMs'],
  ])('refuses %p', (body, field) => {
    expect(errorsOf(PublishTrackingDto, body).join('; ')).toContain(field);
  });
});
