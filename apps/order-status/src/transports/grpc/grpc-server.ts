import * as grpcJs from '@grpc/grpc-js';
import {
  Server,
  ServerCredentials,
  type ChannelOptions,
  type Metadata,
  type ServerWritableStream,
} from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { PackageDefinition } from '@grpc/proto-loader';
import { ServerGrpc, type GrpcMethodStreamingType, type GrpcOptions } from '@nestjs/microservices';
import {
  ORDER_STATUS_PROTO_PACKAGE,
  ORDER_STATUS_PROTO_PATH,
  PROTO_LOADER_OPTIONS,
} from '@app/contracts';
import { DEFAULT_GRPC_PREFACE_TIMEOUT_MS, type AppConfig } from '../../config/app-config';
import type { GrpcDiscovery } from './grpc-discovery';
import { closeSilentConnections } from './preface-timeout';
import { exposeRepeatedAuthorization } from './repeated-authorization';
import { followStreamCall } from './stream-call';
import { decodeRequestsStrictly, refusingMalformed } from './strict-decoding';
import { SUBSCRIBE_ENCODING } from './subscribe-encoding';

/** The packages Nest's gRPC strategy asks for, the ones this service imports itself. */
const GRPC_PACKAGES: Readonly<Record<string, unknown>> = {
  '@grpc/grpc-js': grpcJs,
  '@grpc/proto-loader': protoLoader,
};

/** A handler as Nest hands it to the transport: its whole chain (guards, filters...). */
type NestMethodHandler = (request: unknown, metadata: Metadata, call: unknown) => unknown;

export interface BoundServerGrpcOptions {
  /** GRPC_PREFACE_TIMEOUT_MS (see preface-timeout.ts). @default 10_000 */
  readonly prefaceTimeoutMs?: number;
}

/**
 * Nest's gRPC server strategy, plus what it does not expose: the port grpc-js actually
 * bound, so the service (and its tests) can listen on port 0. Health follows readiness,
 * which bootstrap.ts wires to GrpcDiscovery.
 */
export class BoundServerGrpc extends ServerGrpc {
  private port = 0;

  private readonly prefaceTimeoutMs: number;

  constructor(
    private readonly grpcOptions: GrpcOptions['options'],
    opts: BoundServerGrpcOptions = {},
  ) {
    super(grpcOptions);
    this.prefaceTimeoutMs = opts.prefaceTimeoutMs ?? DEFAULT_GRPC_PREFACE_TIMEOUT_MS;
  }

  /**
   * Nest requires them again by name, and on a failed require logs and exits the process,
   * dropping the cause; handing it the modules already imported keeps one copy of grpc-js
   * and lets a failure throw with its reason.
   */
  protected override loadPackageSynchronously<T>(name: string): T {
    const pkg = GRPC_PACKAGES[name];
    if (pkg === undefined) throw new Error(`the gRPC server has no package "${name}"`);
    return pkg as T;
  }

  get boundPort(): number {
    return this.port;
  }

  /** Every method refuses a request that is not a valid message (see strict-decoding.ts). */
  override createServiceMethod(
    methodHandler: NestMethodHandler,
    protoNativeHandler: unknown,
    streamType: GrpcMethodStreamingType,
  ): (...args: never[]) => unknown {
    return super.createServiceMethod(
      refusingMalformed(methodHandler),
      protoNativeHandler,
      streamType,
    ) as (...args: never[]) => unknown;
  }

  /**
   * Server-streaming methods (Subscribe) without Nest's per-call wrapper, which an open
   * call keeps for its whole life: two suspended async functions (its processing-hooks
   * runner, which this service does not use), a copy of the call object, and
   * `writeObservableToGrpc`'s subscription, drain and cancel closures and value buffer.
   * The handler chain itself
   * (guards, pipes, exception filter) is Nest's as before; see stream-call.ts for how the
   * call ends.
   */
  override createStreamServiceMethod(methodHandler: NestMethodHandler) {
    return (call: ServerWritableStream<unknown, unknown>): void => {
      void followStreamCall(call, methodHandler(call.request, call.metadata, call));
    };
  }

  /**
   * Graceful shutdown's first step: the port stops accepting connections and open ones
   * get GOAWAY (calls in flight continue; clients open new ones elsewhere), then are
   * closed after `graceMs`. Nest's `close()` later force-closes whatever remains.
   */
  drain(graceMs: number): void {
    const server = this.grpcClient as Server | null;
    if (!server || this.port === 0) return;
    // grpc-js names a port-0 binding by the port it actually got.
    const url = (this.grpcOptions.url ?? '127.0.0.1:0').replace(/:\d+$/, `:${this.port}`);
    server.drain(url, graceMs);
    server.unbind(url);
  }

  /** Same construction as ServerGrpc.createClient, keeping the port bindAsync reports. */
  override async createClient(): Promise<Server> {
    const o = this.grpcOptions;
    const options: ChannelOptions = {
      ...o.channelOptions,
      ...(o.maxReceiveMessageLength
        ? { 'grpc.max_receive_message_length': o.maxReceiveMessageLength }
        : {}),
      ...this.getKeepaliveOptions(),
    };
    const server = new Server(options);
    this.port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(
        o.url ?? '127.0.0.1:0',
        // Nest types `credentials` as any; it is grpc-js ServerCredentials when set.
        (o.credentials as ServerCredentials | undefined) ?? ServerCredentials.createInsecure(),
        (err, port) => (err ? reject(err) : resolve(port)),
      ),
    );
    closeSilentConnections(server, this.prefaceTimeoutMs);
    exposeRepeatedAuthorization(server);
    return server;
  }
}

/**
 * The gRPC listener's options, all from config (GRPC_* in docs/configuration.md).
 * `discovery` adds the health and reflection services to the same server.
 */
export function grpcServerOptions(
  config: AppConfig,
  discovery?: GrpcDiscovery,
): GrpcOptions['options'] {
  const g = config.grpc;
  return {
    url: `${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.grpcPort}`,
    package: ORDER_STATUS_PROTO_PACKAGE,
    protoPath: ORDER_STATUS_PROTO_PATH,
    loader: { ...PROTO_LOADER_OPTIONS },
    maxReceiveMessageLength: g.maxReceiveMessageBytes,
    keepalive: {
      keepaliveTimeMs: g.keepaliveTimeMs,
      keepaliveTimeoutMs: g.keepaliveTimeoutMs,
      keepalivePermitWithoutCalls: g.keepalivePermitWithoutCalls ? 1 : 0,
      // Clients pinging more often than this get GOAWAY ENHANCE_YOUR_CALM.
      http2MinPingIntervalWithoutDataMs: g.minPingIntervalMs,
    },
    channelOptions: {
      // Connections are closed (with GOAWAY) after this age so load balancers can
      // rebalance; open streams get the grace period to finish.
      'grpc.max_connection_age_ms': g.maxConnectionAgeMs,
      'grpc.max_connection_age_grace_ms': g.maxConnectionAgeGraceMs,
    },
    // Called by Nest once the server is bound and before the service's handlers are
    // added (ServerGrpc.loadProto receives the server it created in createClient):
    // requests are decoded strictly, Subscribe's serializer learns to pass pre-encoded
    // events through, and discovery adds health and reflection.
    onLoadPackageDefinition: (pkg: PackageDefinition, server: Server) => {
      decodeRequestsStrictly(pkg);
      SUBSCRIBE_ENCODING.install(pkg);
      discovery?.register(pkg, server);
    },
  };
}
