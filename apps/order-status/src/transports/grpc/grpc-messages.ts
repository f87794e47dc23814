import type { Principal } from '@app/auth';
import type { ServerUnaryCall, ServerWritableStream } from '@grpc/grpc-js';
import type { ProtoResponse } from '@app/contracts';

/**
 * Request messages of proto/ (the envelope's and the order domain's) as @grpc/proto-loader
 * decodes them with PROTO_LOADER_OPTIONS (camelCase, enums and longs as numbers, defaults
 * filled in). The fields are typed `unknown` where the handler must validate them anyway.
 */
export interface SubscribeRequest {
  readonly orderId: unknown;
  /** uint64: a Number (longs: Number), so values above 2^53 arrive rounded. */
  readonly afterSeq: unknown;
}

/** The request of every domain's snapshot call. */
export interface GetOrderRequest {
  readonly orderId: unknown;
}

/**
 * The Subscribe call: it writes the envelope's `SubscribeResponse`, whose event arms are
 * the domain's (`itemToProto`). `principal` is set once the caller is authenticated, so the
 * connection log (ops) can name who the stream belonged to, as it does for HTTP and
 * socket.io.
 */
export type SubscribeCall = ServerWritableStream<SubscribeRequest, ProtoResponse> & {
  principal?: Principal;
};
/** A domain's snapshot call (e.g. GetOrder) answers its snapshot message (`snapshotToProto`). */
export type GetOrderCall = ServerUnaryCall<GetOrderRequest, object>;

/** The service name handlers register under (`@GrpcMethod(SERVICE, 'Rpc')`). */
export const GRPC_SERVICE = 'OrderStatusService';
