import { Module } from '@nestjs/common';
import { OrdersGateway } from './orders.gateway';

/** The socket.io transport; the engine itself is set up by OrdersIoAdapter in bootstrap. */
@Module({ providers: [OrdersGateway] })
export class WsModule {}
