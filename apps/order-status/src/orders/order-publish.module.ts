import { Module } from '@nestjs/common';
import { OrderPublisher } from './order-publisher';

/** The publish path, shared by the REST controllers and the gRPC transport's unary calls. */
@Module({ providers: [OrderPublisher], exports: [OrderPublisher] })
export class OrderPublishModule {}
