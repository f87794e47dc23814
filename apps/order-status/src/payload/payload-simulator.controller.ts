import { Body, Controller, Get, HttpCode, Inject, Post, Put } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Scope } from '@app/auth';
import { RequireScopes } from '../auth/auth.decorators';
import { PayloadScheduleDto } from './payload-schedule.dto';
import { PayloadSimulator, type PayloadSimulatorStatus } from './payload-simulator';

/**
 * The admin simulator routes when the service carries the payload domain: the same
 * calls the load test makes on the order domain's (PUT, then POST start and stop), with
 * a payload size instead of an order schedule. Left out of the API documents, as the
 * payload route is.
 */
@Controller('v1/admin/simulator')
// It publishes on everyone's behalf: the same scope as the publish API.
@RequireScopes(Scope.OrdersWrite)
@ApiExcludeController()
export class PayloadSimulatorController {
  constructor(@Inject(PayloadSimulator) private readonly simulator: PayloadSimulator) {}

  @Get()
  status(): PayloadSimulatorStatus {
    return this.simulator.status();
  }

  @Put()
  async configure(@Body() body: PayloadScheduleDto): Promise<PayloadSimulatorStatus> {
    const { autoStart, ...schedule } = body;
    const status = await this.simulator.prepare(schedule);
    return autoStart === false ? status : this.simulator.start();
  }

  @Post('start')
  @HttpCode(200)
  start(): PayloadSimulatorStatus {
    return this.simulator.start();
  }

  @Post('stop')
  @HttpCode(200)
  stop(): PayloadSimulatorStatus {
    return this.simulator.stop();
  }
}
