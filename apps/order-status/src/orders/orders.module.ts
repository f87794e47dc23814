import { Module, type DynamicModule } from '@nestjs/common';
import { OrderPublishModule } from './order-publish.module';
import { OrdersController } from './orders.controller';
import { SimulatorController } from './simulator.controller';
import { TrackingController } from './tracking.controller';

@Module({})
export class OrdersModule {
  /** The admin (simulator) routes are only mounted when enabled. */
  static register(opts: { adminEnabled: boolean }): DynamicModule {
    return {
      module: OrdersModule,
      imports: [OrderPublishModule],
      controllers: opts.adminEnabled
        ? [OrdersController, TrackingController, SimulatorController]
        : [OrdersController, TrackingController],
    };
  }
}
