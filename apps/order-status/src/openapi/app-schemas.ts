import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  getSchemaPath,
  type ApiPropertyOptions,
} from '@nestjs/swagger';
import { ORDER_ID_MAX_LENGTH, ORDER_ID_PATTERN } from '@app/contracts';
import type { EventName, NamedEvent } from '@app/order-domain';
import type {
  SimulatorSchedule as SimulatorScheduleShape,
  SimulatorState,
  SimulatorStatus as SimulatorStatusShape,
} from '../simulator/simulator';
import type { SimulatorScheduleDto } from '../orders/simulator-schedule.dto';
import type { PollBody as PollBodyShape } from '../transports/long-poll/poll-answer';
import { OrderStatusChanged, StreamReset, StreamSkipped, TrackingUpdated } from './api-schemas';

/*
 * OpenAPI schemas of the service's own (non-contract) bodies; see api-schemas.ts for why
 * they are classes that `implement` the types they describe. Bodies declared inside a
 * controller file (stream tickets, session, health) cannot be imported here without an
 * import cycle; test/api-docs compares those against what the routes really answer.
 */

const ORDER_ID = {
  type: String,
  pattern: ORDER_ID_PATTERN.source,
  maxLength: ORDER_ID_MAX_LENGTH,
} as const;

/** A status change in a long-poll answer: the event plus its name. */
export class PolledStatusChange extends OrderStatusChanged {
  @ApiProperty({ enum: ['status'] satisfies EventName[] })
  readonly type!: 'status';
}

/** A tracking update in a long-poll answer: the event plus its name. */
export class PolledTrackingUpdate extends TrackingUpdated {
  @ApiProperty({ enum: ['tracking'] satisfies EventName[] })
  readonly type!: 'tracking';
}

@ApiExtraModels(PolledStatusChange, PolledTrackingUpdate)
export class PollBody implements PollBodyShape {
  @ApiProperty(ORDER_ID)
  readonly orderId!: string;

  @ApiProperty({
    type: 'array',
    items: {
      oneOf: [
        { $ref: getSchemaPath(PolledStatusChange) },
        { $ref: getSchemaPath(PolledTrackingUpdate) },
      ],
      discriminator: {
        propertyName: 'type',
        mapping: {
          status: getSchemaPath(PolledStatusChange),
          tracking: getSchemaPath(PolledTrackingUpdate),
        },
      },
    },
    description:
      'Status changes and tracking updates after `after`, in seq order (at most LONG_POLL_MAX_BATCH), each named by `type`: the same JSON as the SSE and socket.io payloads.',
  })
  readonly events!: NamedEvent[];

  @ApiPropertyOptional({
    type: () => StreamReset,
    description:
      'The cursor could not be served without a gap: replace the view with the snapshot before applying `events`.',
  })
  readonly reset?: StreamReset;

  @ApiPropertyOptional({
    type: () => StreamSkipped,
    description:
      'Events `fromSeq..toSeq`, before `events`, were dropped on overflow and are not coming.',
  })
  readonly skipped?: StreamSkipped;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    format: 'int64',
    description: 'Send this as `after` on the next poll.',
  })
  readonly next!: number;

  @ApiProperty({
    type: Boolean,
    description: 'The order is finished (delivered or cancelled): stop polling.',
  })
  readonly completed!: boolean;
}

/** Body of `PUT /v1/admin/simulator`; validation runs on SimulatorScheduleDto. */
export class SimulatorScheduleBody implements Required<SimulatorScheduleDto> {
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: 100_000,
    description: 'Orders moving at once.',
  })
  readonly orders!: number;

  @ApiProperty({
    type: Number,
    minimum: 0.001,
    maximum: 1_000,
    description:
      'Tracking updates per second per order: the steady rate with `lifecycle: false`, the rate while shipped or out for delivery with `lifecycle: true`.',
  })
  readonly ratePerOrder!: number;

  @ApiPropertyOptional({
    type: Boolean,
    description:
      "true (default): the demo's life cycle (dwell times per status, some cancellations); false: orders are created and shipped, then publish tracking updates at a steady rate.",
  })
  readonly lifecycle!: boolean;

  @ApiPropertyOptional({
    type: String,
    pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,40}$',
    description: 'Order ids are `<prefix>-<n>` (default `order`).',
  })
  readonly prefix!: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 86_400_000,
    description: 'Stop after this many ms (0: until stopped).',
  })
  readonly durationMs!: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 1_000_000,
    description: 'Order n belongs to `customer-<n % customers>`.',
  })
  readonly customers!: number;

  @ApiPropertyOptional({
    type: Boolean,
    description: 'Start at once (default), or wait for `POST /v1/admin/simulator/start`.',
  })
  readonly autoStart!: boolean;
}

class SimulatorSchedule implements SimulatorScheduleShape {
  @ApiProperty({ type: 'integer' })
  readonly orders!: number;
  @ApiProperty({ type: Number })
  readonly ratePerOrder!: number;
  @ApiPropertyOptional({ type: Boolean })
  readonly lifecycle?: boolean;
  @ApiPropertyOptional({ type: String })
  readonly prefix?: string;
  @ApiPropertyOptional({ type: 'integer' })
  readonly durationMs?: number;
  @ApiPropertyOptional({ type: 'integer' })
  readonly customers?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'The first N orders never finish.' })
  readonly longLivedOrders?: number;
  @ApiPropertyOptional({ type: Number, description: 'Dwell times are divided by this.' })
  readonly speed?: number;
}

const SIMULATOR_STATES: readonly SimulatorState[] = ['idle', 'ready', 'running', 'stopped'];

export class SimulatorStatus implements SimulatorStatusShape {
  @ApiProperty({ enum: SIMULATOR_STATES, enumName: 'SimulatorState' })
  readonly state!: SimulatorState;
  @ApiPropertyOptional({ type: () => SimulatorSchedule })
  readonly schedule?: SimulatorSchedule;
  @ApiProperty({ type: 'integer', description: 'Events published since the schedule started.' })
  readonly published!: number;
  @ApiProperty({ type: 'integer', description: 'Publishes that failed (store unavailable).' })
  readonly failed!: number;
  @ApiProperty({ type: [String] })
  readonly activeOrderIds!: readonly string[];
  @ApiPropertyOptional({ type: 'integer', format: 'int64' })
  readonly startedAtUs?: number;
}

/** Body of `POST /v1/stream-tickets`. */
export class StreamTicketRequestBody {
  @ApiProperty(ORDER_ID)
  readonly orderId!: string;
}

export class StreamTicketBody {
  @ApiProperty({ type: String, description: 'Single-use, for this order only.' })
  readonly ticket!: string;
  @ApiProperty({ type: 'integer', description: 'Seconds left to open the stream with it.' })
  readonly expiresInS!: number;
  @ApiProperty({
    type: String,
    example: '/v1/orders/order-1/stream?ticket=...',
    description: 'Ready for `new EventSource(...)` (add `&after=<seq>` to resume).',
  })
  readonly streamPath!: string;
}

export class SessionBody {
  @ApiProperty({ type: String, description: 'The token subject the cookie authenticates.' })
  readonly subject!: string;
  @ApiProperty({ type: 'integer', description: 'Seconds until the token (and cookie) expire.' })
  readonly expiresInS!: number;
}

export class DevTokenBody {
  @ApiProperty({ type: String, description: 'A demo token (HS256, the public demo secret).' })
  readonly token!: string;
}

export class HealthBody {
  @ApiProperty({ enum: ['ok'] })
  readonly status!: 'ok';
  @ApiProperty({ type: 'integer', description: 'Open bus subscriptions on this instance.' })
  readonly subscribers!: number;
  @ApiProperty({ type: 'integer', description: 'Orders the bus holds on this instance.' })
  readonly orders!: number;
  @ApiProperty({ type: 'integer' })
  readonly uptimeS!: number;
}

const INDICATORS: ApiPropertyOptions = {
  type: 'object',
  additionalProperties: {
    type: 'object',
    properties: { status: { type: 'string', enum: ['up', 'down'] } },
    additionalProperties: true,
  },
};

/** @nestjs/terminus' answer: what is up, what is down. */
export class HealthCheckResult {
  @ApiProperty({ enum: ['ok', 'error', 'shutting_down'] })
  readonly status!: string;
  @ApiPropertyOptional(INDICATORS)
  readonly info?: object;
  @ApiPropertyOptional(INDICATORS)
  readonly error?: object;
  @ApiProperty(INDICATORS)
  readonly details!: object;
}
