import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { OrderStatus, ORDER_STATUSES } from './order-status';
import { MAX_PADDING_BYTES } from './validation';

/** Body of `POST /v1/orders/:orderId/status` (gRPC UpdateStatus carries the same fields). */
export class PublishStatusDto {
  @IsIn(ORDER_STATUSES, { message: `status must be one of: ${ORDER_STATUSES.join(', ')}` })
  status!: OrderStatus;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_PADDING_BYTES)
  paddingBytes?: number;
}
