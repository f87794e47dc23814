import { Controller, Inject, UseFilters } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { Metadata, ServerUnaryCall } from '@grpc/grpc-js';
import { authorizeWrite, type Principal } from '@app/auth';
import { ErrorCode, GatewayError, OWNER_ID_PATTERN, parseOrderId } from '@app/contracts';
import {
  eventToProto,
  parseTracking,
  statusFromProto,
  trackingToProto,
  type ProtoOrderStatusChanged,
  type ProtoTrackingUpdated,
} from '@app/order-domain';
import { isReplay } from '@app/store';
import { AuthService } from '../auth/auth.service';
import { authenticateCall } from '../transports/grpc/grpc-authenticate';
import { withinDeadline } from '../transports/grpc/grpc-deadline';
import { GrpcExceptionFilter } from '../transports/grpc/grpc-exception.filter';
import { GRPC_SERVICE } from '../transports/grpc/grpc-messages';
import { grpcOrigin } from '../tracing/trace-headers';
import { OrderPublisher, type PublishCaller } from './order-publisher';

/**
 * The order domain's publish calls of `orderstatus.v1.OrderStatusService` (UpdateStatus,
 * UpdateTracking), served by the gRPC transport beside its Subscribe and GetOrder: the
 * same publish path as REST (OrderPublisher). Request messages as
 * @grpc/proto-loader decodes them with PROTO_LOADER_OPTIONS (camelCase, enums and longs
 * as numbers, defaults filled in), fields `unknown` where the handler validates them.
 */
interface UpdateStatusRequest {
  readonly orderId: unknown;
  readonly status: unknown;
  /** '' (proto3 default) when not given: the caller owns a new order. */
  readonly ownerId?: unknown;
  /** Idempotency key; '' (proto3 default) when not given. */
  readonly requestId?: unknown;
  /** Cancellation reason; '' (proto3 default) when not given. */
  readonly reason?: unknown;
}

interface UpdateTrackingRequest {
  readonly orderId: unknown;
  /** GeoPoint; null when the caller left it out (a message field has no proto3 default). */
  readonly location: unknown;
  readonly etaMs: unknown;
  readonly requestId?: unknown;
}

interface UpdateTrackingResponse {
  readonly tracking: ProtoTrackingUpdated;
  readonly replayed: boolean;
}

interface UpdateStatusResponse {
  readonly event: ProtoOrderStatusChanged;
  /** The event was published by an earlier call with the same request_id. */
  readonly replayed: boolean;
}

type UpdateStatusCall = ServerUnaryCall<UpdateStatusRequest, UpdateStatusResponse>;
type UpdateTrackingCall = ServerUnaryCall<UpdateTrackingRequest, UpdateTrackingResponse>;

@Controller()
@UseFilters(GrpcExceptionFilter)
export class OrderPublishGrpcController {
  constructor(
    @Inject(OrderPublisher) private readonly publisher: OrderPublisher,
    @Inject(AuthService) private readonly auth: AuthService,
  ) {}

  /** The publish API (same rules as `POST /v1/orders/:orderId/status`). */
  @GrpcMethod(GRPC_SERVICE, 'UpdateStatus')
  async updateStatus(
    req: UpdateStatusRequest,
    metadata: Metadata,
    call: UpdateStatusCall,
  ): Promise<UpdateStatusResponse> {
    return withinDeadline(call.getDeadline(), async () => {
      const principal = await authenticateCall(this.auth, metadata);
      // As REST's scope guard: a caller that may not publish learns nothing from validation.
      authorizeWrite(principal);
      const orderId = parseOrderId(req.orderId);
      const status = statusFromProto(req.status);
      if (status === undefined) {
        throw new GatewayError(
          ErrorCode.InvalidArgument,
          'status must be a known OrderStatus other than ORDER_STATUS_UNSPECIFIED',
        );
      }
      const ownerId = parseOwnerId(req.ownerId);
      // proto3 strings default to '': empty means "no reason" (the store checks the rest).
      const reason = req.reason === '' || req.reason === undefined ? undefined : req.reason;
      const event = await this.publisher.publishStatus(
        callerOf(principal, req.requestId, metadata),
        {
          orderId,
          status,
          ...(reason !== undefined ? { reason: reason as string } : {}),
          ...(ownerId !== undefined ? { ownerId } : {}),
        },
      );
      return { event: eventToProto(event), replayed: isReplay(event) };
    });
  }

  /** Tracking updates (same rules as `POST /v1/orders/:orderId/tracking`). */
  @GrpcMethod(GRPC_SERVICE, 'UpdateTracking')
  async updateTracking(
    req: UpdateTrackingRequest,
    metadata: Metadata,
    call: UpdateTrackingCall,
  ): Promise<UpdateTrackingResponse> {
    return withinDeadline(call.getDeadline(), async () => {
      const principal = await authenticateCall(this.auth, metadata);
      // As REST's scope guard: a caller that may not publish learns nothing from validation.
      authorizeWrite(principal);
      const orderId = parseOrderId(req.orderId);
      const { location, etaMs } = parseTracking(req.location, req.etaMs);
      const tracking = await this.publisher.publishTracking(
        callerOf(principal, req.requestId, metadata),
        { orderId, location, etaMs },
      );
      return { tracking: trackingToProto(tracking), replayed: isReplay(tracking) };
    });
  }
}

/** proto3 strings default to '': an empty `request_id` means "no idempotency key". */
function callerOf(principal: Principal, requestId: unknown, metadata: Metadata): PublishCaller {
  const rawKey = requestId === null || requestId === '' ? undefined : requestId;
  return { principal, rawKey, keyField: 'request_id', origin: grpcOrigin(metadata) };
}

/** proto3 strings default to '': empty means "the caller". */
function parseOwnerId(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string' && OWNER_ID_PATTERN.test(value)) return value;
  throw new GatewayError(
    ErrorCode.InvalidArgument,
    `owner_id must match ${OWNER_ID_PATTERN.source}`,
  );
}
