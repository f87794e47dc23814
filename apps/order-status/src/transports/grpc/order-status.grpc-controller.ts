import { Controller, Inject, UseFilters } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { Metadata } from '@grpc/grpc-js';
import type { Observable } from 'rxjs';
import { authorizeWrite, ownerForNewOrder, type Principal } from '@app/auth';
import {
  ErrorCode,
  eventToProto,
  GatewayError,
  MAX_PADDING_BYTES,
  OWNER_ID_PATTERN,
  parseOrderId,
  parseIdempotencyKey,
  parseTracking,
  scopedIdempotencyKey,
  snapshotToProto,
  statusFromProto,
  trackingToProto,
  type ProtoOrderSnapshot,
} from '@app/contracts';
import { isReplay, OrderEventBus, OrderStore } from '@app/event-bus';
import { AuthService } from '../../auth/auth.service';
import { StreamConnections } from '../../connections/stream-connections.service';
import { PublishRateLimiter } from '../../auth/publish-rate.limiter';
import { ConnectionLog } from '../../ops/connection-log';
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
  type UpdateTrackingCall,
  type UpdateTrackingRequest,
  type UpdateTrackingResponse,
} from './grpc-messages';
import { subscribeStream } from './subscribe-stream';

/**
 * `orderstatus.v1.OrderStatusService`. Handlers take Nest's raw arguments (request,
 * metadata, call) with no param decorators, so the app's global ValidationPipe (which
 * the hybrid app inherits) never sees proto messages; each handler validates its own
 * fields with the shared contracts parsers and throws GatewayErrors, which
 * GrpcExceptionFilter turns into gRPC status codes.
 *
 * Every call authenticates with its `authorization: Bearer <token>` metadata
 * (UNAUTHENTICATED otherwise) and is authorized per order (PERMISSION_DENIED).
 */
@Controller()
@UseFilters(GrpcExceptionFilter)
export class OrderStatusGrpcController {
  constructor(
    @Inject(OrderEventBus) private readonly bus: OrderEventBus,
    @Inject(StreamConnections) private readonly connections: StreamConnections,
    @Inject(OrderStore) private readonly store: OrderStore,
    @Inject(AuthService) private readonly auth: AuthService,
    @Inject(PublishRateLimiter) private readonly publishRate: PublishRateLimiter,
    @Inject(ConnectionLog) private readonly log: ConnectionLog,
  ) {}

  /**
   * Server-streaming: replay after `after_seq`, then live events; see subscribe-stream.ts
   * (which also writes the call's connection log lines). Authenticated and authorized
   * before anything is read from the bus; ends with UNAUTHENTICATED when the token
   * expires.
   */
  @GrpcMethod(GRPC_SERVICE, 'Subscribe')
  subscribe(req: SubscribeRequest, metadata: Metadata, call: SubscribeCall): Observable<never> {
    return subscribeStream(
      {
        connections: this.connections,
        log: this.log,
        authenticate: () => this.authenticate(metadata),
      },
      req,
      call,
    );
  }

  @GrpcMethod(GRPC_SERVICE, 'GetOrder')
  async getOrder(
    req: GetOrderRequest,
    metadata: Metadata,
    call: GetOrderCall,
  ): Promise<ProtoOrderSnapshot> {
    return withinDeadline(call.getDeadline(), async () => {
      const principal = await this.authenticate(metadata);
      const orderId = parseOrderId(req.orderId);
      const stored = await this.auth.authorizeRead(principal, orderId, 'grpc');
      // The bus may be fresher than the store (a shared store's notification arrived).
      const live = await this.bus.getSnapshot(orderId);
      return snapshotToProto(live && live.lastSeq > stored.lastSeq ? live : stored);
    });
  }

  /** The publish API (same rules as `POST /v1/orders/:orderId/status`). */
  @GrpcMethod(GRPC_SERVICE, 'UpdateStatus')
  async updateStatus(
    req: UpdateStatusRequest,
    metadata: Metadata,
    call: UpdateStatusCall,
  ): Promise<UpdateStatusResponse> {
    return withinDeadline(call.getDeadline(), async () => {
      const principal = await this.authenticate(metadata);
      authorizeWrite(principal);
      await this.publishRate.consume(principal);
      const orderId = parseOrderId(req.orderId);
      const status = statusFromProto(req.status);
      if (status === undefined) {
        throw new GatewayError(
          ErrorCode.InvalidArgument,
          'status must be a known OrderStatus other than ORDER_STATUS_UNSPECIFIED',
        );
      }
      const paddingBytes = parsePaddingBytes(req.paddingBytes);
      const ownerId = ownerForNewOrder(principal, parseOwnerId(req.ownerId));
      const requestId = parseRequestId(req.requestId);
      // proto3 strings default to '': empty means "no reason" (the store checks the rest).
      const reason = req.reason === '' || req.reason === undefined ? undefined : req.reason;
      const event = await this.store.publish({
        orderId,
        status,
        ...(reason !== undefined ? { reason: reason as string } : {}),
        paddingBytes,
        ownerId,
        ...(requestId === undefined
          ? {}
          : { idempotencyKey: scopedIdempotencyKey(principal.subject, requestId) }),
      });
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
      const principal = await this.authenticate(metadata);
      authorizeWrite(principal);
      await this.publishRate.consume(principal);
      const orderId = parseOrderId(req.orderId);
      const { location, etaMs } = parseTracking(req.location, req.etaMs);
      const paddingBytes = parsePaddingBytes(req.paddingBytes);
      const requestId = parseRequestId(req.requestId);
      const tracking = await this.store.publishTracking({
        orderId,
        location,
        etaMs,
        paddingBytes,
        ...(requestId === undefined
          ? {}
          : { idempotencyKey: scopedIdempotencyKey(principal.subject, requestId) }),
      });
      return { tracking: trackingToProto(tracking), replayed: isReplay(tracking) };
    });
  }

  /** The call's `authorization` metadata (`Bearer <token>`), verified. */
  private authenticate(metadata: Metadata): Promise<Principal> {
    const values = metadata.get('authorization').filter((v): v is string => typeof v === 'string');
    return this.auth.authenticateHeader(values.length > 0 ? values : undefined, 'grpc');
  }
}

/** proto3 strings default to '': empty means "no idempotency key". */
function parseRequestId(value: unknown): string | undefined {
  return value === undefined || value === null || value === ''
    ? undefined
    : parseIdempotencyKey(value, 'request_id');
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
