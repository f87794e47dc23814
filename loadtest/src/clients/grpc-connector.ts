import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS } from '@app/contracts/proto-path';
import { StreamEndTrailer } from '@app/contracts/grpc-trailers';
import { SUBSCRIBE_PATH } from './grpc-frame';
import { leanSubscribeResponse, type SubscribeResponseMsg } from './lean/lean-proto';
import type { Connector, GrpcTls, OpenStream, StreamHandlers } from './transport';

export interface OrderStatusClient extends grpc.Client {
  Subscribe(
    req: { orderId: string; afterSeq: number },
    metadata: grpc.Metadata,
  ): grpc.ClientReadableStream<SubscribeResponseMsg>;
  GetOrder(
    req: { orderId: string },
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res?: { lastSeq: number }) => void,
  ): grpc.ClientUnaryCall;
}

type ClientCtor = (new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ChannelOptions,
) => OrderStatusClient) & { service: grpc.ServiceDefinition };

let ctor: ClientCtor | undefined;

/** The generated client constructor, loaded once with the options the service uses. */
export function orderStatusClientCtor(): ClientCtor {
  if (!ctor) {
    const def = protoLoader.loadSync(ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS);
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      orderstatus: { v1: { OrderStatusService: ClientCtor } };
    };
    ctor = pkg.orderstatus.v1.OrderStatusService;
  }
  return ctor;
}

/**
 * A dedicated connection: grpc-js shares subchannels process-wide by default, so without
 * a local pool every "client" would multiplex over one TCP connection.
 */
export const OWN_CONNECTION_OPTIONS: grpc.ChannelOptions = { 'grpc.use_local_subchannel_pool': 1 };

export function authMetadata(token: string | undefined): grpc.Metadata {
  const md = new grpc.Metadata();
  if (token !== undefined) md.set('authorization', `Bearer ${token}`);
  return md;
}

/**
 * The reason of a stream the service ended on purpose and told the client to resume:
 * UNAVAILABLE with the reason in the `stream-end-reason` trailer (contracts'
 * StreamEndTrailer; the details text says the same for humans).
 */
export function streamEndReason(
  err: Pick<grpc.StatusObject, 'code' | 'metadata'>,
): string | undefined {
  if (err.code !== grpc.status.UNAVAILABLE) return undefined;
  const [reason] = err.metadata.get(StreamEndTrailer.Reason);
  return typeof reason === 'string' ? reason : undefined;
}

/** Hands one SubscribeResponse to a stream's handlers (this client's and the lean one's). */
export function dispatchSubscribeResponse(
  msg: SubscribeResponseMsg,
  handlers: StreamHandlers,
): void {
  const event = msg.event ?? msg.tracking ?? msg.payload;
  if (event) handlers.onEvent(event);
  else if (msg.skipped) handlers.onSkipped(msg.skipped);
  else if (msg.reset)
    handlers.onReset({
      reason: String(msg.reset.reason),
      lastSeq: (msg.reset.snapshot ?? msg.reset.payloadSnapshot)?.lastSeq ?? 0,
    });
}

/** `OrderStatusService.Subscribe`, one connection per subscriber unless `shared`. */
export class GrpcConnector implements Connector {
  readonly transport = 'grpc' as const;
  requests = 0;
  private shared?: OrderStatusClient;
  private readonly clients = new Set<OrderStatusClient>();

  constructor(
    private readonly address: string,
    private readonly token: string | undefined,
    private readonly sharedChannel: boolean,
    /** TLS instead of plaintext (nginx in the cluster scenario). */
    private readonly tls?: GrpcTls,
  ) {}

  private client(): OrderStatusClient {
    const Ctor = orderStatusClientCtor();
    const creds =
      this.tls === undefined
        ? grpc.credentials.createInsecure()
        : grpc.credentials.createSsl(Buffer.from(this.tls.caPem));
    const options: grpc.ChannelOptions = {
      ...(this.tls === undefined ? {} : { 'grpc.ssl_target_name_override': this.tls.serverName }),
      ...(this.sharedChannel ? {} : OWN_CONNECTION_OPTIONS),
    };
    if (this.sharedChannel) {
      this.shared ??= new Ctor(this.address, creds, options);
      return this.shared;
    }
    const c = new Ctor(this.address, creds, options);
    this.clients.add(c);
    return c;
  }

  open(orderId: string, afterSeq: number, handlers: StreamHandlers): OpenStream {
    this.requests += 1;
    const client = this.client();
    let done = false;
    let opened = false;
    const open = (): void => {
      if (opened) return;
      opened = true;
      handlers.onOpen();
    };
    const release = (): void => {
      if (!this.sharedChannel) {
        this.clients.delete(client);
        client.close();
      }
    };
    // The generated method with a lean reader of the event arm as its deserializer (the
    // full protobuf decoder still reads every other arm).
    const method = orderStatusClientCtor().service.Subscribe;
    const call = client.makeServerStreamRequest<
      { orderId: string; afterSeq: number },
      SubscribeResponseMsg
    >(
      SUBSCRIBE_PATH,
      method.requestSerialize,
      (buf) =>
        leanSubscribeResponse(buf, (b) => method.responseDeserialize(b) as SubscribeResponseMsg),
      { orderId, afterSeq },
      authMetadata(this.token),
    );
    call.on('metadata', open);
    call.on('data', (msg: SubscribeResponseMsg) => {
      if (done) return;
      open();
      dispatchSubscribeResponse(msg, handlers);
    });
    call.on('error', (err: grpc.ServiceError) => {
      if (done) return;
      done = true;
      release();
      // A server-ended stream (max age, shutdown) is UNAVAILABLE naming its reason: a
      // clean end to resume from at once, as SSE's `event: end` and socket.io's `end` are.
      const ended = streamEndReason(err);
      if (ended !== undefined) handlers.onEnd(ended);
      else handlers.onError(`grpc_${grpc.status[err.code] ?? err.code}`);
    });
    call.on('end', () => {
      // 'end' also follows an error; an OK status means the order completed.
      if (done) return;
      done = true;
      release();
      handlers.onEnd('completed');
    });
    return {
      close: () => {
        done = true;
        call.cancel();
        release();
      },
      pause: () => call.pause(),
      resume: () => call.resume(),
    };
  }

  async close(): Promise<void> {
    this.shared?.close();
    for (const c of this.clients) c.close();
    this.clients.clear();
  }
}
