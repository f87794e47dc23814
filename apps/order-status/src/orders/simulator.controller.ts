import { Body, Controller, Get, HttpCode, Inject, Post, Put } from '@nestjs/common';
import { Scope } from '@app/auth';
import { OrderSimulator, type SimulatorStatus } from '@app/event-bus';
import { RequireScopes } from '../auth/auth.decorators';
import { SimulatorScheduleDto } from './simulator-schedule.dto';

/**
 * Run-time control of the simulator, so a load test can set an exact schedule:
 * PUT creates the orders (and starts unless `autoStart: false`), then subscribers
 * connect, then POST /start begins the clock. Disabled with ADMIN_ENABLED=false.
 */
@Controller('v1/admin/simulator')
// It publishes on everyone's behalf: the same scope as the publish API.
@RequireScopes(Scope.OrdersWrite)
export class SimulatorController {
  constructor(@Inject(OrderSimulator) private readonly simulator: OrderSimulator) {}

  @Get()
  status(): SimulatorStatus {
    return this.simulator.status();
  }

  @Put()
  async configure(@Body() body: SimulatorScheduleDto): Promise<SimulatorStatus> {
    const { autoStart, ...schedule } = body;
    const status = await this.simulator.prepare(schedule);
    return autoStart === false ? status : this.simulator.start();
  }

  @Post('start')
  @HttpCode(200)
  start(): SimulatorStatus {
    return this.simulator.start();
  }

  @Post('stop')
  @HttpCode(200)
  stop(): SimulatorStatus {
    return this.simulator.stop();
  }
}
