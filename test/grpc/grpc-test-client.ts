import {
  credentials,
  InterceptingCall,
  loadPackageDefinition,
  type Interceptor,
  type CallOptions,
  type ChannelOptions,
  type Client,
  type ClientReadableStream,
  type ServiceClientConstructor,
  type ServiceError,
  type StatusObject,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS } from '@app/contracts';
import {
  type ProtoOrderSnapshot,
  type ProtoOrderStatusChanged,
  type ProtoSubscribeResponse,
  type ProtoTrackingUpdated,
} from '@app/order-domain';
import type { ProtoPayloadSnapshot } from '@app/payload-domain';
import { DEFAULT_TEST_TOKEN } from '../support/auth';
import { once } from '../support/wait-for';

type UnaryCallback<T> = (err: ServiceError | null, res?: T) => void;

/** The generated client, as @grpc/grpc-js builds it from the proto at run time. */
export interface OrderStatusClient extends Client {
  subscribe(
    req: { orderId: string; afterSeq?: number },
    options?: CallOptions,
  ): ClientReadableStream<ProtoSubscribeResponse>;
  getOrder(
    req: { orderId: string },
    options: CallOptions,
    cb: UnaryCallback<ProtoOrderSnapshot>,
  ): void;
  /** The payload domain's snapshot (a service with STREAM_DOMAIN=payload). */
  getPayloadStream(
    req: { orderId: string },
    options: CallOptions,
    cb: UnaryCallback<ProtoPayloadSnapshot>,
  ): void;
  updateStatus(
    req: { orderId: string; status: number; reason?: string },
    options: CallOptions,
    cb: UnaryCallback<{ event: ProtoOrderStatusChanged; replayed: boolean }>,
  ): void;
  updateTracking(
    req: {
      orderId: string;
      location?: { lat: number; lon: number };
      etaMs?: number;
      requestId?: string;
    },
    options: CallOptions,
    cb: UnaryCallback<{ tracking: ProtoTrackingUpdated; replayed: boolean }>,
  ): void;
}

const pkg = loadPackageDefinition(loadSync(ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS)) as {
  orderstatus: { v1: { OrderStatusService: ServiceClientConstructor } };
};

/**
 * A real grpc-js client of the service, one channel per client. Every call carries
 * `authorization: Bearer <token>` metadata (the default test token; `null`: none) unless
 * the call sets its own.
 */
export function orderStatusClient(
  address: string,
  options: ChannelOptions = {},
  token: string | null = DEFAULT_TEST_TOKEN,
): OrderStatusClient {
  const Ctor = pkg.orderstatus.v1.OrderStatusService;
  const interceptors = token === null ? [] : [bearerInterceptor(token)];
  return new Ctor(address, credentials.createInsecure(), {
    ...options,
    interceptors,
  }) as unknown as OrderStatusClient;
}

/** Adds the bearer token to a call's metadata unless it already has `authorization`. */
export function bearerInterceptor(token: string): Interceptor {
  return (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start: (metadata, listener, next) => {
        if (metadata.get('authorization').length === 0) {
          metadata.set('authorization', `Bearer ${token}`);
        }
        next(metadata, listener);
      },
    });
}

/** Promisified unary call; rejects with the grpc-js ServiceError (code, details). */
export function unary<Req, Res>(
  method: (req: Req, options: CallOptions, cb: UnaryCallback<Res>) => void,
  req: Req,
  options: CallOptions = {},
): Promise<Res> {
  return new Promise((resolve, reject) =>
    method(req, options, (err, res) => (err ? reject(err) : resolve(res as Res))),
  );
}

export interface Collected {
  /** Messages received so far (grows while the stream runs). */
  readonly items: ProtoSubscribeResponse[];
  /**
   * The final status (grpc-js always emits 'status', also after an 'error', with the
   * same code); rejects if it does not come within `timeoutMs`.
   */
  readonly status: Promise<StatusObject>;
}

/** Collects a server stream's messages and its final status. */
export function collect(
  call: ClientReadableStream<ProtoSubscribeResponse>,
  timeoutMs = 10_000,
): Collected {
  const items: ProtoSubscribeResponse[] = [];
  call.on('data', (m: ProtoSubscribeResponse) => items.push(m));
  // The status event carries the error's code; without a listener 'error' would throw.
  call.on('error', () => undefined);
  const status = once<StatusObject>(call, 'status', timeoutMs);
  // A spec that fails before it awaits the status must fail alone: an unobserved
  // rejection ten seconds later would end the Jest process and every spec file in it.
  status.catch(() => undefined);
  return { items, status };
}

/**
 * The seqs of the events received (resets and skipped ranges left out): status changes and
 * tracking updates alike, or the payload domain's events (the `payload` arm).
 */
export function seqsOf(items: readonly ProtoSubscribeResponse[]): number[] {
  return items.flatMap((m) => {
    const arm = m as Partial<Record<'event' | 'tracking' | 'payload', { seq: unknown }>>;
    const event = arm.event ?? arm.tracking ?? arm.payload;
    return event ? [Number(event.seq)] : [];
  });
}

export function deadlineIn(ms: number): Date {
  return new Date(Date.now() + ms);
}
