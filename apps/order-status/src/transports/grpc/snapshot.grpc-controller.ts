import { Controller, Inject, UseFilters, type Type } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { Metadata } from '@grpc/grpc-js';
import { parseOrderId } from '@app/contracts';
import { StreamEventBus } from '@app/event-bus';
import { AuthService } from '../../auth/auth.service';
import { OrderPublisher } from '../../orders/order-publisher';
import { authenticateCall } from './grpc-authenticate';
import { withinDeadline } from './grpc-deadline';
import { GrpcExceptionFilter } from './grpc-exception.filter';
import { GRPC_SERVICE, type GetOrderCall, type GetOrderRequest } from './grpc-messages';

/**
 * The controller of a domain's snapshot call, `rpc` of `orderstatus.v1.OrderStatusService`
 * (e.g. `GetOrder`): each domain has its own call because a call's response is one
 * message, the domain's snapshot. The domain's module mounts it, so a service answers
 * only its own domain's (grpc-js answers another's UNIMPLEMENTED). It authenticates with
 * the call's metadata, authorizes the read as every transport does (PERMISSION_DENIED,
 * NOT_FOUND) and answers within the call's deadline.
 */
export function snapshotGrpcController(rpc: string): Type<unknown> {
  @Controller()
  @UseFilters(GrpcExceptionFilter)
  class SnapshotGrpcController {
    constructor(
      @Inject(OrderPublisher) private readonly publisher: OrderPublisher,
      @Inject(AuthService) private readonly auth: AuthService,
      @Inject(StreamEventBus) private readonly bus: StreamEventBus,
    ) {}

    @GrpcMethod(GRPC_SERVICE, rpc)
    async snapshot(req: GetOrderRequest, metadata: Metadata, call: GetOrderCall): Promise<object> {
      return withinDeadline(call.getDeadline(), async () => {
        const principal = await authenticateCall(this.auth, metadata);
        const orderId = parseOrderId(req.orderId);
        const snapshot = await this.publisher.snapshot(principal, orderId, 'grpc');
        return this.bus.domain.proto.snapshotToProto(snapshot);
      });
    }
  }
  return SnapshotGrpcController;
}
