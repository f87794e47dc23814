import {
  connectivityState,
  credentials,
  loadPackageDefinition,
  Metadata,
  status as GrpcStatus,
  type Channel,
  type ChannelOptions,
  type ClientReadableStream,
  type ServiceClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { EXPECTED_DOMAIN_METADATA } from '@app/contracts/expected-domain';
import { GRPC_CALL_CANCELLED } from '@app/contracts/grpc-call-events';
import { StreamEndTrailer } from '@app/contracts/grpc-trailers';
import { StreamEndReason } from '@app/contracts/stream-envelope';
import { ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS } from '@app/contracts/proto-path';
import type { ProtoResponse } from '@app/contracts/stream-proto';
import type { StreamDomain } from '@app/contracts/stream-domain';
import { grpcError, networkError, toWatchError } from '../watch-error';
import type { ConnectionEnd, ConnectorFactory } from './connector';
import { itemFromProto } from './proto-items';

interface SubscribeClient {
  subscribe(
    req: { orderId: string; afterSeq: number },
    metadata: Metadata,
  ): ClientReadableStream<ProtoResponse>;
  getChannel(): Channel;
  close(): void;
}

type ClientCtor = new (
  address: string,
  creds: ReturnType<typeof credentials.createInsecure>,
  options: ChannelOptions,
) => SubscribeClient;

/**
 * A channel of the watch's own: grpc-js shares subchannels (and their reconnect backoff)
 * between channels to the same target unless told not to, and a fresh channel must dial
 * at once.
 */
const CHANNEL_OPTIONS: ChannelOptions = { 'grpc.use_local_subchannel_pool': 1 };

let ctor: ClientCtor | undefined;

/** The generated client class, loaded once per process (proto parsing is not free). */
function clientClass(): ClientCtor {
  if (ctor) return ctor;
  const pkg = loadPackageDefinition(loadSync(ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS)) as {
    orderstatus: { v1: { OrderStatusService: ServiceClientConstructor } };
  };
  ctor = pkg.orderstatus.v1.OrderStatusService as unknown as ClientCtor;
  return ctor;
}

/** `host:port`, `http://host:port` (plaintext) or `https://host:port` (TLS). */
function target(baseUrl: string): { address: string; tls: boolean } {
  const m = /^(https?):\/\/([^/]+)\/*$/.exec(baseUrl);
  return m ? { address: m[2], tls: m[1] === 'https' } : { address: baseUrl, tls: false };
}

/** grpc-js's details when the channel could not connect (the service never answered). */
const NO_CHANNEL =
  /No connection established|Failed to connect|certificate|handshake|ECONN|ENOTFOUND|EAI_AGAIN/i;

function trailer(md: Metadata | undefined, key: string): string | undefined {
  const v = md?.get(key)[0];
  return typeof v === 'string' ? v : undefined;
}

/**
 * gRPC server-streaming `Subscribe {orderId, afterSeq}`, the token as `authorization`
 * metadata and the domain's name as `stream-domain` (read per call, so a refreshed token is used on the next one). One channel
 * per watch, reused across resubscribes while it is connected or idle; one that is in
 * TRANSIENT_FAILURE is replaced, because grpc-js fails every call on it with its last
 * error until its own reconnect backoff (1 s, growing by 1.6 up to 120 s) runs out, so
 * the watch's backoff, not grpc-js's, paces the attempts after a crash. A stream the
 * service ended on purpose carries its reason, resume point and advice as trailers
 * (contracts' StreamEndTrailer): that is an end, not a failure, whatever its code.
 * Status OK is `completed`.
 */
export const grpcConnector: ConnectorFactory<StreamDomain> = (opts) => {
  const { address, tls } = target(opts.baseUrl);
  const { domain } = opts;
  const Client = clientClass();
  const channel = () =>
    new Client(
      address,
      tls ? credentials.createSsl() : credentials.createInsecure(),
      CHANNEL_OPTIONS,
    );
  let client = channel();
  return {
    connect: (req) =>
      new Promise<ConnectionEnd>((resolve, reject) => {
        if (
          client.getChannel().getConnectivityState(false) === connectivityState.TRANSIENT_FAILURE
        ) {
          client.close();
          client = channel();
        }
        const md = new Metadata();
        const token = req.token();
        if (token) md.set('authorization', `Bearer ${token}`);
        md.set(EXPECTED_DOMAIN_METADATA, domain.name);
        const call = client.subscribe({ orderId: req.orderId, afterSeq: req.afterSeq }, md);
        let opened = false;
        let settled = false;
        const open = () => {
          if (opened) return;
          opened = true;
          req.opened();
        };
        const finish = (settle: () => void) => {
          if (settled) return;
          settled = true;
          req.signal.removeEventListener('abort', onAbort);
          call.removeAllListeners();
          // An 'error' after cancel() must not be unhandled.
          call.on('error', () => undefined);
          settle();
        };
        const onAbort = () => {
          finish(() => reject(new Error('aborted')));
          call.cancel();
        };
        req.signal.addEventListener('abort', onAbort, { once: true });
        // The service sends headers once it accepted the call (auth and order checked).
        call.on('metadata', open);
        call.on('data', (m: ProtoResponse) => {
          open();
          try {
            const item = itemFromProto(domain, m);
            if (item) req.item(item);
          } catch (err) {
            finish(() => reject(toWatchError(err)));
            call.cancel();
          }
        });
        call.on('end', () => finish(() => resolve({ reason: StreamEndReason.Completed })));
        call.on('error', (err: ServiceError) => {
          const reason = trailer(err.metadata, StreamEndTrailer.Reason);
          const retry = trailer(err.metadata, StreamEndTrailer.RetryAfterMs);
          const retryAfterMs =
            retry !== undefined && /^\d+$/.test(retry) ? Number(retry) : undefined;
          if (reason !== undefined) {
            finish(() =>
              resolve(retryAfterMs === undefined ? { reason } : { reason, retryAfterMs }),
            );
            return;
          }
          const unreachable =
            !opened && err.code === GrpcStatus.UNAVAILABLE && NO_CHANNEL.test(err.details);
          finish(() =>
            reject(
              err.code === GrpcStatus.CANCELLED
                ? new Error(GRPC_CALL_CANCELLED)
                : unreachable
                  ? networkError(opts.baseUrl, {
                      code: /\b(E[A-Z]{3,}|[A-Z_]*CERT[A-Z_]*)\b/.exec(err.details)?.[1],
                      message: err.details,
                    })
                  : grpcError(err.code, err.details, retryAfterMs),
            ),
          );
        });
      }),
    close: () => client.close(),
  };
};
