import { PickType } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { MAX_PAYLOAD_BYTES } from '@app/payload-domain';
import { SimulatorScheduleDto } from '../orders/simulator-schedule.dto';

/**
 * Body of `PUT /v1/admin/simulator` in the payload domain: the order simulator's steady
 * schedule (its checks included) with a payload size in place of the life cycle.
 */
export class PayloadScheduleDto extends PickType(SimulatorScheduleDto, [
  'orders',
  'ratePerOrder',
  'prefix',
  'durationMs',
  'autoStart',
] as const) {
  @IsInt()
  @Min(0)
  @Max(MAX_PAYLOAD_BYTES)
  readonly payloadBytes!: number;
}
