import { IsIn, IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { OrderStatus, ORDER_STATUSES } from './order-status';
import { MAX_PADDING_BYTES, OWNER_ID_PATTERN } from './validation';

/** Body of `POST /v1/orders/:orderId/status` (gRPC UpdateStatus carries the same fields). */
export class PublishStatusDto {
  @IsIn(ORDER_STATUSES, { message: `status must be one of: ${ORDER_STATUSES.join(', ')}` })
  status!: OrderStatus;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_PADDING_BYTES)
  paddingBytes?: number;

  /**
   * Owner of a new order (default: the caller's token subject); ignored for an order that
   * already exists, whose owner never changes.
   */
  @IsOptional()
  @Matches(OWNER_ID_PATTERN, { message: `ownerId must match ${OWNER_ID_PATTERN.source}` })
  ownerId?: string;
}
