import { Body, Controller, Get, HttpCode, Inject, Post, Put } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scope } from '@app/auth';
import { ErrorCode } from '@app/contracts';
import { OrderSimulator, type SimulatorStatus } from '../simulator/simulator';
import { RequireScopes } from '../auth/auth.decorators';
import { ApiBearer, ApiErrors, ApiJsonBodyErrors } from '../openapi/api-decorators';
import * as Schema from '../openapi/app-schemas';
import { SimulatorScheduleDto } from './simulator-schedule.dto';

/**
 * Run-time control of the simulator, so a load test can set an exact schedule:
 * PUT creates the orders (and starts unless `autoStart: false`), then subscribers
 * connect, then POST /start begins the clock. Disabled with ADMIN_ENABLED=false.
 */
@Controller('v1/admin/simulator')
// It publishes on everyone's behalf: the same scope as the publish API.
@RequireScopes(Scope.OrdersWrite)
@ApiTags('admin')
@ApiBearer()
@ApiErrors(ErrorCode.Unauthenticated, ErrorCode.PermissionDenied)
export class SimulatorController {
  constructor(@Inject(OrderSimulator) private readonly simulator: OrderSimulator) {}

  @Get()
  @ApiOperation({
    operationId: 'getSimulator',
    summary: "The simulator's state (needs `orders:write`)",
  })
  @ApiOkResponse({ type: Schema.SimulatorStatus })
  status(): SimulatorStatus {
    return this.simulator.status();
  }

  @Put()
  @ApiOperation({
    operationId: 'configureSimulator',
    summary: 'Set a schedule: create the orders, and start unless `autoStart: false`',
  })
  @ApiBody({ type: Schema.SimulatorScheduleBody })
  @ApiOkResponse({ type: Schema.SimulatorStatus })
  @ApiErrors(ErrorCode.InvalidArgument, ErrorCode.Unavailable)
  @ApiJsonBodyErrors()
  async configure(@Body() body: SimulatorScheduleDto): Promise<SimulatorStatus> {
    const { autoStart, ...schedule } = body;
    const status = await this.simulator.prepare(schedule);
    return autoStart === false ? status : this.simulator.start();
  }

  @Post('start')
  @HttpCode(200)
  @ApiOperation({ operationId: 'startSimulator', summary: 'Start the prepared schedule' })
  @ApiOkResponse({ type: Schema.SimulatorStatus })
  start(): SimulatorStatus {
    return this.simulator.start();
  }

  @Post('stop')
  @HttpCode(200)
  @ApiOperation({ operationId: 'stopSimulator', summary: 'Stop publishing' })
  @ApiOkResponse({ type: Schema.SimulatorStatus })
  stop(): SimulatorStatus {
    return this.simulator.stop();
  }
}
