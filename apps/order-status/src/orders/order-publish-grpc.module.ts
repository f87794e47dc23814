import { Module } from '@nestjs/common';
import { snapshotGrpcController } from '../transports/grpc/snapshot.grpc-controller';
import { OrderPublishGrpcController } from './order-publish.grpc-controller';
import { OrderPublishModule } from './order-publish.module';

/**
 * The order domain's gRPC calls: its snapshot (GetOrder) and its publish calls
 * (UpdateStatus, UpdateTracking), served by the gRPC transport's server beside Subscribe:
 * Nest routes a call to whichever controller declares its method.
 */
@Module({
  imports: [OrderPublishModule],
  controllers: [snapshotGrpcController('GetOrder'), OrderPublishGrpcController],
})
export class OrderPublishGrpcModule {}
