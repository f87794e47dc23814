import { IsInt, Max, Min } from 'class-validator';
import { MAX_PAYLOAD_BYTES } from '@app/payload-domain';

/** `POST /v1/streams/:orderId/payload`: the payload's size. */
export class PublishPayloadDto {
  @IsInt()
  @Min(0)
  @Max(MAX_PAYLOAD_BYTES)
  readonly bytes!: number;
}
