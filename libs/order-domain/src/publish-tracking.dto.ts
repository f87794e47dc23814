import { IsInt, Max, Min, ValidateBy } from 'class-validator';
import type { GeoPoint } from './order-events';
import { MAX_ETA_MS } from './validation';

const LOCATION_MESSAGE = 'location must be { lat: -90..90, lon: -180..180 } in degrees';
const ETA_MESSAGE = `etaMs must be an integer epoch ms from 1 to ${MAX_ETA_MS}`;

function isCoordinate(value: unknown, limit: number): boolean {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= limit;
}

/**
 * An object with `lat` -90..90 and `lon` -180..180. One validator rather than a nested
 * DTO: a nested DTO needs class-transformer's `@Type`, which needs reflect-metadata
 * loaded by everyone who imports the contracts (the load test and the CLI too).
 */
function isGeoPoint(value: unknown): value is GeoPoint {
  if (typeof value !== 'object' || value === null) return false;
  const { lat, lon } = value as Partial<GeoPoint>;
  return isCoordinate(lat, 90) && isCoordinate(lon, 180);
}

/**
 * Body of `POST /v1/orders/:orderId/tracking` (gRPC UpdateTracking carries the same
 * fields). Accepted while the order is `shipped` or `out_for_delivery` (409 otherwise).
 */
export class PublishTrackingDto {
  /** Where the parcel is, WGS 84 degrees (other properties of the object are ignored). */
  @ValidateBy({
    name: 'isGeoPoint',
    validator: { validate: isGeoPoint, defaultMessage: () => LOCATION_MESSAGE },
  })
  location!: GeoPoint;

  /** Estimated time of arrival, epoch milliseconds. */
  @IsInt({ message: ETA_MESSAGE })
  @Min(1, { message: ETA_MESSAGE })
  @Max(MAX_ETA_MS, { message: ETA_MESSAGE })
  etaMs!: number;
}
