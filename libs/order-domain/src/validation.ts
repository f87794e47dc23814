import { ErrorCode, GatewayError } from '@app/contracts/gateway-error';
import type { GeoPoint, Tracking } from './order-events';
import { OrderStatus } from './order-status';

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
