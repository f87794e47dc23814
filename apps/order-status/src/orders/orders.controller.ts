import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ownerForNewOrder, Scope, type Principal } from '@app/auth';
import { PublishStatusDto, type OrderSnapshot, type OrderStatusChanged } from '@app/contracts';
import { OrderEventBus, OrderStore } from '@app/event-bus';
import { CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { AuthService } from '../auth/auth.service';
import { PublishRateLimiter } from '../auth/publish-rate.limiter';
import { OrderIdPipe } from './order-id.pipe';

/** The publish API and the snapshot, over REST. gRPC exposes the same through its unary calls. */
@Controller('v1/orders')
export class OrdersController {
  constructor(
    @Inject(OrderStore) private readonly store: OrderStore,
    @Inject(OrderEventBus) private readonly bus: OrderEventBus,
    @Inject(AuthService) private readonly auth: AuthService,
    @Inject(PublishRateLimiter) private readonly publishRate: PublishRateLimiter,
  ) {}

  /** The order's current state, with its owner; only the owner or `orders:read:any`. */
  @Get(':orderId')
  async snapshot(
    @Param('orderId', OrderIdPipe) orderId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<OrderSnapshot> {
    const stored = await this.auth.authorizeRead(principal, orderId, 'http');
    // The bus may be fresher (a shared store's notification already arrived); the owner
    // lives with the stored order.
    const live = await this.bus.getSnapshot(orderId);
    if (!live || live.lastSeq <= stored.lastSeq) return stored;
    return stored.ownerId !== undefined ? { ...live, ownerId: stored.ownerId } : live;
  }

  /**
   * Publishes a status change; 201 with the event and its assigned seq. Needs
   * `orders:write`; a new order belongs to `ownerId` when given, else to the caller.
   */
  @Post(':orderId/status')
  @HttpCode(201)
  @RequireScopes(Scope.OrdersWrite)
  async publish(
    @Param('orderId', OrderIdPipe) orderId: string,
    @Body() body: PublishStatusDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<OrderStatusChanged> {
    await this.publishRate.consume(principal);
    return this.store.publish({
      orderId,
      status: body.status,
      paddingBytes: body.paddingBytes,
      ownerId: ownerForNewOrder(principal, body.ownerId),
    });
  }
}
