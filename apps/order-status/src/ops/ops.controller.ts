import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { StreamEventBus } from '@app/event-bus';
import { ApiPublic } from '../openapi/api-decorators';
import { HealthBody as HealthBodySchema } from '../openapi/app-schemas';
import { MetricsService } from './metrics.service';

export interface HealthBody {
  readonly status: 'ok';
  readonly subscribers: number;
  readonly orders: number;
  readonly uptimeS: number;
}

/** Liveness and Prometheus metrics. */
@Controller()
@ApiTags('ops')
export class OpsController {
  constructor(
    @Inject(MetricsService) private readonly metrics: MetricsService,
    @Inject(StreamEventBus) private readonly bus: StreamEventBus,
  ) {}

  @Get('health')
  @ApiOperation({ operationId: 'health', summary: "This instance's counters" })
  @ApiPublic()
  @ApiOkResponse({ type: HealthBodySchema })
  health(): HealthBody {
    return {
      status: 'ok',
      subscribers: this.bus.subscriberCount(),
      orders: this.bus.orderCount,
      uptimeS: Math.round(process.uptime()),
    };
  }

  @Get('metrics')
  @ApiPublic()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOperation({
    operationId: 'metrics',
    summary: 'Prometheus metrics (text exposition format 0.0.4)',
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({ content: { 'text/plain': { schema: { type: 'string' } } } })
  async scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
