import { Controller, Get, Header, Inject } from '@nestjs/common';
import { OrderEventBus } from '@app/event-bus';
import { MetricsService } from './metrics.service';

export interface HealthBody {
  readonly status: 'ok';
  readonly subscribers: number;
  readonly orders: number;
  readonly uptimeS: number;
}

/** Liveness and Prometheus metrics. */
@Controller()
export class OpsController {
  constructor(
    @Inject(MetricsService) private readonly metrics: MetricsService,
    @Inject(OrderEventBus) private readonly bus: OrderEventBus,
  ) {}

  @Get('health')
  health(): HealthBody {
    return {
      status: 'ok',
      subscribers: this.bus.subscriberCount(),
      orders: this.bus.orderCount,
      uptimeS: Math.round(process.uptime()),
    };
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  async scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
