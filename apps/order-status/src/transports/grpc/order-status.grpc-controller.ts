import { Controller, Inject, UseFilters } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { Metadata } from '@grpc/grpc-js';
import type { Observable } from 'rxjs';
import {
  ErrorCode,
  eventToProto,
  GatewayError,
  MAX_PADDING_BYTES,
  parseOrderId,
  parseSeq,
  snapshotToProto,
  statusFromProto,
  type ProtoOrderSnapshot,
} from '@app/contracts';
import { OrderEventBus, OrderStore } from '@app/event-bus';
import { withinDeadline } from './grpc-deadline';
import { GrpcExceptionFilter } from './grpc-exception.filter';
import {
  GRPC_SERVICE,
  type GetOrderCall,
  type GetOrderRequest,
  type SubscribeCall,
  type SubscribeRequest,
  type UpdateStatusCall,
  type UpdateStatusRequest,
  type UpdateStatusResponse,
} from './grpc-messages';
import { subscribeStream } from './subscribe-stream';

/**
 * `orderstatus.v1.OrderStatusService`. Handlers take Nest's raw arguments (request,
 * metadata, call) with no param decorators, so the app's global ValidationPipe (which
 * the hybrid app inherits) never sees proto messages; each handler validates its own
 * fields with the shared contracts parsers and throws GatewayErrors, which
 * GrpcExceptionFilter turns into gRPC status codes.
 */
@Controller()
@UseFilters(GrpcExceptionFilter)
export class OrderStatusGrpcController {
  constructor(
    @Inject(OrderEventBus) private readonly bus: OrderEventBus,
    @Inject(OrderStore) private readonly store: OrderStore,
  ) {}

  /** Server-streaming: replay after `after_seq`, then live events; see subscribe-stream.ts. */
  @GrpcMethod(GRPC_SERVICE, 'Subscribe')
  subscribe(req: SubscribeRequest, _metadata: Metadata, call: SubscribeCall): Observable<never> {
    const orderId = parseOrderId(req.orderId);
    const afterSeq = parseSeq(req.afterSeq, 'after_seq');
    return subscribeStream(this.bus, call, orderId, afterSeq);
  }

  @GrpcMethod(GRPC_SERVICE, 'GetOrder')
  async getOrder(
    req: GetOrderRequest,
    _metadata: Metadata,
    call: GetOrderCall,
  ): Promise<ProtoOrderSnapshot> {
    return withinDeadline(call.getDeadline(), async () => {
      const orderId = parseOrderId(req.orderId);
      const snapshot = await this.bus.getSnapshot(orderId);
      if (!snapshot) throw new GatewayError(ErrorCode.NotFound, `order ${orderId} not found`);
      return snapshotToProto(snapshot);
    });
  }

  /** The publish API (same rules as `POST /v1/orders/:orderId/status`). */
  @GrpcMethod(GRPC_SERVICE, 'UpdateStatus')
  async updateStatus(
    req: UpdateStatusRequest,
    _metadata: Metadata,
    call: UpdateStatusCall,
  ): Promise<UpdateStatusResponse> {
    return withinDeadline(call.getDeadline(), async () => {
      const orderId = parseOrderId(req.orderId);
      const status = statusFromProto(req.status);
      if (status === undefined) {
        throw new GatewayError(
          ErrorCode.InvalidArgument,
          'status must be a known OrderStatus other than ORDER_STATUS_UNSPECIFIED',
        );
      }
      const paddingBytes = parsePaddingBytes(req.paddingBytes);
      const event = await this.store.publish({ orderId, status, paddingBytes });
      return { event: eventToProto(event) };
    });
  }
}

function parsePaddingBytes(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) {
    if (value <= MAX_PADDING_BYTES) return value;
  }
  throw new GatewayError(
    ErrorCode.InvalidArgument,
    `padding_bytes must be an integer from 0 to ${MAX_PADDING_BYTES}`,
  );
}
