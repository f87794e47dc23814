import { Module } from '@nestjs/common';
import { OrderStatusGrpcController } from './order-status.grpc-controller';

/**
 * The gRPC transport's handler of Subscribe (the domain's snapshot and publish calls are
 * its own module's, e.g. OrderPublishGrpcModule). The listener itself (grpc-js server,
 * keepalive, health, reflection) is the hybrid app's microservice strategy, built in
 * grpc-server.ts.
 */
@Module({ controllers: [OrderStatusGrpcController] })
export class GrpcTransportModule {}
