import { Module, type DynamicModule } from '@nestjs/common';
import { OrderPublishModule } from '../orders/order-publish.module';
import { snapshotGrpcController } from '../transports/grpc/snapshot.grpc-controller';
import { PayloadController } from './payload.controller';
import { PayloadSimulator } from './payload-simulator';
import { PayloadSimulatorController } from './payload-simulator.controller';

/**
 * The payload domain's calls (STREAM_DOMAIN=payload): its publish route (REST only), its
 * gRPC snapshot call, GetPayloadStream, and the load test's steady schedule.
 */
@Module({})
export class PayloadModule {
  /** The admin (simulator) routes are only mounted when enabled, as the order domain's. */
  static register(opts: { adminEnabled: boolean }): DynamicModule {
    const grpc = snapshotGrpcController('GetPayloadStream');
    return {
      module: PayloadModule,
      imports: [OrderPublishModule],
      providers: [PayloadSimulator],
      controllers: opts.adminEnabled
        ? [PayloadController, grpc, PayloadSimulatorController]
        : [PayloadController, grpc],
    };
  }
}
