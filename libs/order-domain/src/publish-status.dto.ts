import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { OrderStatus, ORDER_STATUSES } from './order-status';
import { CANCEL_REASON_MAX_LENGTH, CANCEL_REASON_PATTERN } from './validation';
import { OWNER_ID_PATTERN } from '@app/contracts/validation';

const REASON_MESSAGE = `reason must be 1-${CANCEL_REASON_MAX_LENGTH} printable characters`;

/** Body of `POST /v1/orders/:orderId/status` (gRPC UpdateStatus carries the same fields). */
export class PublishStatusDto {
  @IsIn(ORDER_STATUSES, { message: `status must be one of: ${ORDER_STATUSES.join(', ')}` })
  status!: OrderStatus;

  /**
   * Owner of a new order (default: the caller's token subject); ignored for an order that
   * already exists, whose owner never changes.
   */
  @IsOptional()
  @Matches(OWNER_ID_PATTERN, { message: `ownerId must match ${OWNER_ID_PATTERN.source}` })
  ownerId?: string;

  /** Why the order is cancelled; only with status `cancelled` (400 otherwise). */
  @IsOptional()
  @IsString({ message: REASON_MESSAGE })
  @MaxLength(CANCEL_REASON_MAX_LENGTH, { message: REASON_MESSAGE })
  @Matches(CANCEL_REASON_PATTERN, { message: REASON_MESSAGE })
  reason?: string;
}
