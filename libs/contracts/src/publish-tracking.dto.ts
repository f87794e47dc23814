import { Type } from 'class-transformer';
import {
  IsDefined,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import type { GeoPoint } from './order-events';
import { MAX_ETA_MS, MAX_PADDING_BYTES } from './validation';

const LOCATION_MESSAGE = 'location must be { lat: -90..90, lon: -180..180 } in degrees';
const ETA_MESSAGE = `etaMs must be an integer epoch ms from 1 to ${MAX_ETA_MS}`;

/** `location` of a tracking update: WGS 84 degrees. */
export class GeoPointDto implements GeoPoint {
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: LOCATION_MESSAGE })
  @Min(-90, { message: LOCATION_MESSAGE })
  @Max(90, { message: LOCATION_MESSAGE })
  lat!: number;

  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: LOCATION_MESSAGE })
  @Min(-180, { message: LOCATION_MESSAGE })
  @Max(180, { message: LOCATION_MESSAGE })
  lon!: number;
}

/**
 * Body of `POST /v1/orders/:orderId/tracking` (gRPC UpdateTracking carries the same
 * fields). Accepted while the order is `shipped` or `out_for_delivery` (409 otherwise).
 */
export class PublishTrackingDto {
  @IsDefined({ message: LOCATION_MESSAGE })
  @IsObject({ message: LOCATION_MESSAGE })
  @ValidateNested({ message: LOCATION_MESSAGE })
  @Type(() => GeoPointDto)
  location!: GeoPointDto;

  /** Estimated time of arrival, epoch milliseconds. */
  @IsInt({ message: ETA_MESSAGE })
  @Min(1, { message: ETA_MESSAGE })
  @Max(MAX_ETA_MS, { message: ETA_MESSAGE })
  etaMs!: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_PADDING_BYTES)
  paddingBytes?: number;
}
