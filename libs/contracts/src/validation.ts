import { ErrorCode, GatewayError } from './gateway-error';
import type { GeoPoint, Tracking } from './order-events';
import { OrderStatus } from './order-status';

/** Order ids: 1-64 characters of [A-Za-z0-9_-], starting with a letter or digit. */
export const ORDER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const ORDER_ID_MAX_LENGTH = 64;

/** Largest padding a publish may ask for (payload-size experiments, not bulk data). */
export const MAX_PADDING_BYTES = 64 * 1024;

/**
 * Owner (customer) ids are token subjects: 1-128 visible ASCII characters, no spaces
 * (identity providers use forms like `auth0|123` or `user@example.com`).
 */
export const OWNER_ID_PATTERN = /^[\x21-\x7E]{1,128}$/;

export function isValidOrderId(value: unknown): value is string {
  return typeof value === 'string' && ORDER_ID_PATTERN.test(value);
}

export function parseOrderId(value: unknown): string {
  if (!isValidOrderId(value)) {
    throw new GatewayError(
      ErrorCode.InvalidArgument,
      `orderId must match ${ORDER_ID_PATTERN.source} (1-${ORDER_ID_MAX_LENGTH} characters)`,
    );
  }
  return value;
}

// 16 digits reach Number.MAX_SAFE_INTEGER; the safe-integer check below rejects the rest.
const DIGITS = /^\d{1,16}$/;

/**
 * Parses a resume cursor (`after`, `Last-Event-ID`, `afterSeq`): a non-negative integer,
 * given as a number or a string of digits. Absent means 0 (from the start of retention).
 * Anything else is an InvalidArgument naming `name`, never a silent 0.
 */
export function parseSeq(value: unknown, name: string): number {
  if (value === undefined || value === null || value === '') return 0;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && DIGITS.test(value) && Number.isSafeInteger(Number(value))) {
    return Number(value);
  }
  throw new GatewayError(ErrorCode.InvalidArgument, `${name} must be a non-negative integer`);
}

/** Longest cancellation reason, in UTF-16 code units: a sentence, not a document. */
export const CANCEL_REASON_MAX_LENGTH = 200;

/**
 * A cancellation reason: 1-200 characters with no control, format or unassigned code
 * points (\p{C}), so it prints as one line in a log or a UI whatever the client sent.
 */
export const CANCEL_REASON_PATTERN = /^[^\p{C}]{1,200}$/u;

/**
 * Checks the optional reason of a status change: only a cancellation carries one, and it
 * must match CANCEL_REASON_PATTERN. Undefined means "no reason".
 * @throws GatewayError InvalidArgument
 */
export function parseStatusReason(status: OrderStatus, reason: unknown): string | undefined {
  if (reason === undefined) return undefined;
  if (status !== OrderStatus.Cancelled) {
    throw new GatewayError(
      ErrorCode.InvalidArgument,
      'reason is only accepted with status cancelled',
    );
  }
  if (
    typeof reason !== 'string' ||
    reason.length > CANCEL_REASON_MAX_LENGTH ||
    !CANCEL_REASON_PATTERN.test(reason)
  ) {
    throw new GatewayError(
      ErrorCode.InvalidArgument,
      `reason must be 1-${CANCEL_REASON_MAX_LENGTH} printable characters`,
    );
  }
  return reason;
}

/** Latest ETA accepted: the largest epoch ms a JavaScript Date can hold (year 275760). */
export const MAX_ETA_MS = 8_640_000_000_000_000;

function isCoordinate(value: unknown, limit: number): value is number {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= limit;
}

/**
 * Checks a tracking update's location and ETA: latitude -90..90, longitude -180..180
 * (finite numbers), ETA an integer epoch ms in 1..MAX_ETA_MS. Shared by the REST body
 * (after its DTO) and gRPC, so both answer the same words.
 * @throws GatewayError InvalidArgument
 */
export function parseTracking(location: unknown, etaMs: unknown): Tracking {
  const point = location as Partial<GeoPoint> | null | undefined;
  if (
    typeof point !== 'object' ||
    point === null ||
    !isCoordinate(point.lat, 90) ||
    !isCoordinate(point.lon, 180)
  ) {
    throw new GatewayError(
      ErrorCode.InvalidArgument,
      'location must be { lat: -90..90, lon: -180..180 } in degrees',
    );
  }
  if (
    typeof etaMs !== 'number' ||
    !Number.isSafeInteger(etaMs) ||
    etaMs < 1 ||
    etaMs > MAX_ETA_MS
  ) {
    throw new GatewayError(
      ErrorCode.InvalidArgument,
      `etaMs must be an integer epoch ms from 1 to ${MAX_ETA_MS}`,
    );
  }
  return { location: { lat: point.lat, lon: point.lon }, etaMs };
}
