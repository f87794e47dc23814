import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { ORDER_ID_PATTERN } from './validation';

/** Payload of the socket.io `subscribe` message. */
export class SubscribeDto {
  @Matches(ORDER_ID_PATTERN, { message: `orderId must match ${ORDER_ID_PATTERN.source}` })
  orderId!: string;

  @IsOptional()
  @IsInt({ message: 'afterSeq must be a non-negative integer' })
  @Min(0, { message: 'afterSeq must be a non-negative integer' })
  @Max(Number.MAX_SAFE_INTEGER)
  afterSeq?: number;

  /** Checked by `checkExpectedDomain` (the one decision every transport shares), not here. */
  @IsOptional()
  domain?: unknown;
}

/** Payload of the socket.io `unsubscribe` message. */
export class UnsubscribeDto {
  @Matches(ORDER_ID_PATTERN, { message: `orderId must match ${ORDER_ID_PATTERN.source}` })
  orderId!: string;
}
