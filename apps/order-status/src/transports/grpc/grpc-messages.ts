import type { Principal } from '@app/auth';
import type { ServerUnaryCall, ServerWritableStream } from '@grpc/grpc-js';
import type {
  ProtoOrderSnapshot,
  ProtoOrderStatusChanged,
  ProtoSubscribeResponse,
  ProtoTrackingUpdated,
} from '@app/contracts';

/**
 * Request messages of proto/order_status.proto as @grpc/proto-loader decodes them with
 * PROTO_LOADER_OPTIONS (camelCase, enums and longs as numbers, defaults filled in). The
 * fields are typed `unknown` where the handler must validate them anyway.
 */
export interface SubscribeRequest {
  readonly orderId: unknown;
  /** uint64: a Number (longs: Number), so values above 2^53 arrive rounded. */
  readonly afterSeq: unknown;
}

export interface GetOrderRequest {
  readonly orderId: unknown;
}

export interface UpdateStatusRequest {
  readonly orderId: unknown;
  readonly status: unknown;
  readonly paddingBytes: unknown;
  /** '' (proto3 default) when not given: the caller owns a new order. */
  readonly ownerId?: unknown;
  /** Idempotency key; '' (proto3 default) when not given. */
  readonly requestId?: unknown;
  /** Cancellation reason; '' (proto3 default) when not given. */
  readonly reason?: unknown;
}

export interface UpdateTrackingRequest {
  readonly orderId: unknown;
  /** GeoPoint; null when the caller left it out (a message field has no proto3 default). */
  readonly location: unknown;
  readonly etaMs: unknown;
  readonly paddingBytes: unknown;
  readonly requestId?: unknown;
}

export interface UpdateTrackingResponse {
  readonly tracking: ProtoTrackingUpdated;
  readonly replayed: boolean;
}

export interface UpdateStatusResponse {
  readonly event: ProtoOrderStatusChanged;
  /** The event was published by an earlier call with the same request_id. */
  readonly replayed: boolean;
}

/**
 * The Subscribe call. `principal` is set once the caller is authenticated, so the
 * connection log (ops) can name who the stream belonged to, as it does for HTTP and
 * socket.io.
 */
export type SubscribeCall = ServerWritableStream<SubscribeRequest, ProtoSubscribeResponse> & {
  principal?: Principal;
};
export type GetOrderCall = ServerUnaryCall<GetOrderRequest, ProtoOrderSnapshot>;
export type UpdateStatusCall = ServerUnaryCall<UpdateStatusRequest, UpdateStatusResponse>;
export type UpdateTrackingCall = ServerUnaryCall<UpdateTrackingRequest, UpdateTrackingResponse>;

/** The service name handlers register under (`@GrpcMethod(SERVICE, 'Rpc')`). */
export const GRPC_SERVICE = 'OrderStatusService';
