import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import {
  ErrorCode,
  GatewayError,
  PublishStatusDto,
  type OrderSnapshot,
  type OrderStatusChanged,
} from '@app/contracts';
import { OrderEventBus, OrderStore } from '@app/event-bus';
import { OrderIdPipe } from './order-id.pipe';

/** The publish API and the snapshot, over REST. gRPC exposes the same through its unary calls. */
@Controller('v1/orders')
export class OrdersController {
  constructor(
    @Inject(OrderStore) private readonly store: OrderStore,
    @Inject(OrderEventBus) private readonly bus: OrderEventBus,
  ) {}

  @Get(':orderId')
  async snapshot(@Param('orderId', OrderIdPipe) orderId: string): Promise<OrderSnapshot> {
    const snap = await this.bus.getSnapshot(orderId);
    if (!snap) throw new GatewayError(ErrorCode.NotFound, `order ${orderId} not found`);
    return snap;
  }

  /** Publishes a status change; 201 with the event and its assigned seq. */
  @Post(':orderId/status')
  @HttpCode(201)
  async publish(
    @Param('orderId', OrderIdPipe) orderId: string,
    @Body() body: PublishStatusDto,
  ): Promise<OrderStatusChanged> {
    return this.store.publish({ orderId, status: body.status, paddingBytes: body.paddingBytes });
  }
}
