import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ErrorCode,
  ORDER_ID_MAX_LENGTH,
  ORDER_ID_PATTERN,
  OWNER_ID_PATTERN,
  ResetReason,
  SkipReason,
  type ErrorBody as ErrorBodyShape,
  type StreamSkipped as StreamSkippedShape,
} from '@app/contracts';
import {
  CANCEL_REASON_MAX_LENGTH,
  MAX_ETA_MS,
  ORDER_STATUSES,
  OrderStatus,
  type GeoPoint as GeoPointShape,
  type OrderSnapshot as OrderSnapshotShape,
  type OrderStatusChanged as OrderStatusChangedShape,
  type PublishStatusDto,
  type PublishTrackingDto,
  type StreamReset as StreamResetShape,
  type Tracking as TrackingShape,
  type TrackingUpdated as TrackingUpdatedShape,
} from '@app/order-domain';

/*
 * OpenAPI schemas of the JSON the REST routes exchange. The contracts are TypeScript
 * interfaces (no runtime shape) and libs/contracts stays free of framework imports (the
 * load test and the browser client import it), so the schemas are classes here that
 * `implement` those interfaces: a field added to or retyped in a contract fails the
 * typecheck until its schema follows. Every property names its type explicitly: the
 * export script runs under tsx (esbuild), which emits no decorator type metadata.
 */

const ORDER_ID = {
  type: String,
  pattern: ORDER_ID_PATTERN.source,
  maxLength: ORDER_ID_MAX_LENGTH,
  example: 'order-1',
} as const;
const SEQ = { type: 'integer', minimum: 1, format: 'int64' } as const;
const EPOCH_US = {
  type: 'integer',
  format: 'int64',
  description: 'Epoch microseconds (`performance.timeOrigin + performance.now()` at the service).',
} as const;
const STATUS = { enum: ORDER_STATUSES, enumName: 'OrderStatus' } as const;

export class OrderStatusChanged implements OrderStatusChangedShape {
  @ApiProperty(ORDER_ID)
  readonly orderId!: string;

  @ApiProperty({ ...SEQ, description: 'Per order, starts at 1, increases by exactly 1.' })
  readonly seq!: number;

  @ApiProperty(STATUS)
  readonly status!: OrderStatus;

  @ApiPropertyOptional({
    ...STATUS,
    description: 'The status this change left; absent only on the first event (`created`).',
  })
  readonly previousStatus?: OrderStatus;

  @ApiProperty({ ...EPOCH_US, description: `Publish time. ${EPOCH_US.description}` })
  readonly publishedAtUs!: number;

  @ApiPropertyOptional({
    type: String,
    maxLength: CANCEL_REASON_MAX_LENGTH,
    description: 'Why the order was cancelled (only on `cancelled`, when the publisher said).',
  })
  readonly reason?: string;
}

export class GeoPoint implements GeoPointShape {
  @ApiProperty({
    type: Number,
    minimum: -90,
    maximum: 90,
    description: 'Latitude, WGS 84 degrees.',
  })
  readonly lat!: number;

  @ApiProperty({
    type: Number,
    minimum: -180,
    maximum: 180,
    description: 'Longitude, WGS 84 degrees.',
  })
  readonly lon!: number;
}

const LOCATION = { type: () => GeoPoint, description: 'Where the parcel is.' } as const;
const ETA_MS = {
  type: 'integer',
  format: 'int64',
  minimum: 1,
  maximum: MAX_ETA_MS,
  description: 'Estimated time of arrival, epoch milliseconds.',
} as const;

export class Tracking implements TrackingShape {
  @ApiProperty(LOCATION)
  readonly location!: GeoPoint;

  @ApiProperty(ETA_MS)
  readonly etaMs!: number;
}

/**
 * Progress that does not change the status (a carrier scan, a GPS fix, a new ETA); it
 * shares the order's seq sequence with status changes.
 */
export class TrackingUpdated implements TrackingUpdatedShape {
  @ApiProperty(ORDER_ID)
  readonly orderId!: string;

  @ApiProperty({ ...SEQ, description: 'Same sequence as the status changes.' })
  readonly seq!: number;

  @ApiProperty({ ...STATUS, description: 'The order status when it was published (unchanged).' })
  readonly status!: OrderStatus;

  @ApiProperty({ ...EPOCH_US, description: `Publish time. ${EPOCH_US.description}` })
  readonly publishedAtUs!: number;

  @ApiProperty(LOCATION)
  readonly location!: GeoPoint;

  @ApiProperty(ETA_MS)
  readonly etaMs!: number;
}

export class OrderSnapshot implements OrderSnapshotShape {
  @ApiProperty(ORDER_ID)
  readonly orderId!: string;

  @ApiProperty(STATUS)
  readonly status!: OrderStatus;

  @ApiProperty({ ...SEQ, description: 'Seq of the last published event.' })
  readonly lastSeq!: number;

  @ApiProperty({ ...EPOCH_US, description: `Time of the last event. ${EPOCH_US.description}` })
  readonly updatedAtUs!: number;

  @ApiPropertyOptional({
    type: () => Tracking,
    description: "The newest tracking update's location and ETA, once there has been one.",
  })
  readonly tracking?: Tracking;

  @ApiPropertyOptional({
    type: String,
    pattern: OWNER_ID_PATTERN.source,
    description:
      "The customer (token subject) the order belongs to. Every snapshot carries it, a reset's too.",
  })
  readonly ownerId?: string;
}

export class StreamReset implements StreamResetShape {
  @ApiProperty({ enum: Object.values(ResetReason), enumName: 'ResetReason' })
  readonly reason!: ResetReason;

  @ApiProperty({
    type: () => OrderSnapshot,
    description: 'Replace the view with this, and continue after `snapshot.lastSeq`.',
  })
  readonly snapshot!: OrderSnapshot;
}

export class StreamSkipped implements StreamSkippedShape {
  @ApiProperty({ ...SEQ, description: 'First seq not delivered.' })
  readonly fromSeq!: number;

  @ApiProperty({ ...SEQ, description: 'Last seq not delivered; the cursor moves here.' })
  readonly toSeq!: number;

  @ApiProperty({ enum: Object.values(SkipReason), enumName: 'SkipReason' })
  readonly reason!: SkipReason;
}

export class ErrorDetail {
  @ApiProperty({ enum: Object.values(ErrorCode), enumName: 'ErrorCode' })
  readonly code!: ErrorCode;

  @ApiProperty({ type: String, description: 'For humans; act on `code`.' })
  readonly message!: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    description: 'When a retry may succeed (also sent as `Retry-After`, in seconds).',
  })
  readonly retryAfterMs?: number;
}

/** The body of every HTTP error (and of every socket.io error ack). */
export class ErrorBody implements ErrorBodyShape {
  @ApiProperty({ type: () => ErrorDetail })
  readonly error!: ErrorDetail;
}

/**
 * Body of `POST /v1/orders/{orderId}/status`. Validation runs on PublishStatusDto (in
 * libs/contracts); a test compares the two classes' properties.
 */
export class PublishStatusBody implements Required<PublishStatusDto> {
  @ApiProperty({
    ...STATUS,
    description:
      'The new status. A new order starts at `created`; statuses move forward; `cancelled` may follow any non-terminal status.',
  })
  readonly status!: OrderStatus;

  @ApiPropertyOptional({
    type: String,
    pattern: OWNER_ID_PATTERN.source,
    description:
      "Owner of a new order (default: the caller's token subject); ignored for an existing order.",
  })
  readonly ownerId!: string;

  @ApiPropertyOptional({
    type: String,
    maxLength: CANCEL_REASON_MAX_LENGTH,
    description: 'Why the order is cancelled; only with status `cancelled` (400 otherwise).',
  })
  readonly reason!: string;
}

/**
 * Body of `POST /v1/orders/{orderId}/tracking`. Validation runs on PublishTrackingDto (in
 * libs/contracts); test/api-docs compares the two.
 */
export class PublishTrackingBody implements Required<PublishTrackingDto> {
  @ApiProperty({ ...LOCATION, description: 'Where the parcel is (other properties are ignored).' })
  readonly location!: GeoPoint;

  @ApiProperty(ETA_MS)
  readonly etaMs!: number;
}
