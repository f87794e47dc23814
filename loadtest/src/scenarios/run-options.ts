import type { ConnectorOptions, HeaderProfile, TransportName } from '../clients/transport';
import type { RunningService } from '../service/launcher';

/**
 * The server a run drives: the service, the bare Node server (same wire format, no
 * framework), or Nchan (nginx's pub/sub module, an outside peer in C).
 */
/**
 * 'nest': the service; 'bare': the bare Node server (loadtest/src/bare); 'fastify' and
 * 'floor': the bare server's long-poll on Fastify alone and on NestJS + Fastify, with
 * nothing of the service (loadtest/src/floor); 'nchan': nginx + Nchan.
 */
export type ServerKind = 'nest' | 'bare' | 'fastify' | 'floor' | 'nchan';

/** Everything one transport run needs; scenarios build these, the CLI supplies defaults. */
/** Where a subscriber connects when a run spreads them (cluster: each instance, or nginx). */
export type SubscriberEndpoint = Pick<
  ConnectorOptions,
  'host' | 'httpPort' | 'httpsPort' | 'grpcPort' | 'grpcTls'
>;

export interface TransportRun {
  readonly scenario: string;
  readonly variant: string;
  readonly transport: TransportName;
  readonly subscribers: number;
  /**
   * Orders the subscribers spread over: subscriber i follows order i mod `orders`
   * (broadcast: many subscribers per order). @default subscribers (one order each)
   */
  readonly orders?: number;
  readonly ratePerOrder: number;
  readonly durationS: number;
  readonly payloadBytes: number;
  /** @default 'bare' */
  readonly headers?: HeaderProfile;
  /** Route subscriber traffic through the byte-counting proxy with this one-way delay. */
  readonly proxy?: { readonly oneWayDelayMs?: number; readonly only?: 'all' | 'first' };
  /** Throttle of the proxied connection(s), bytes/s (slow-consumer). */
  readonly throttleBytesPerSec?: number;
  /** Service environment (queue capacity, overflow policy ...). */
  readonly env?: Readonly<Record<string, string>>;
  readonly grpcSharedChannel?: boolean;
  /**
   * Subscribers whose latency is not sampled read in batches, once every this many ms
   * (ReadBatcher), where the transport's connector can (SSE over HTTP/1.1, socket.io) and
   * the run goes neither through the proxy nor to other endpoints; gRPC's read as data
   * arrives through a client below grpc-js instead (readsLean: the raw client, or the lean
   * one over a shared channel), and HTTP/2's (long-poll, SSE) through the raw HTTP/2
   * client (readsRawHttp2). 0 or absent: every subscriber reads as events arrive,
   * through the connector sampled subscribers use.
   */
  readonly readBatchMs?: number;
  /** Resume on stream end/error. @default true */
  readonly reconnect?: boolean;
  /** Start the simulator's clock; false for the idle scenario. @default true */
  readonly publish?: boolean;
  /** Count proxy bytes from the first connection (handshakes included), as seed 001 did. */
  readonly countSetupBytes?: boolean;
  /** Start the service with its inspector (idle: forced GC). */
  readonly inspect?: boolean;
  /**
   * Which server this run drives: overhead's and broadcast's bare runs say 'bare', their
   * Nchan runs 'nchan'. @default RunContext.server
   */
  readonly server?: ServerKind;
  /**
   * Subscriber i connects to `endpoints[i % endpoints.length]` instead of the service's
   * own ports; control traffic (simulator, last seqs, /metrics) still goes to the
   * service. Not combined with `proxy`. @default the service's ports
   */
  readonly endpoints?: readonly SubscriberEndpoint[];
  /**
   * Publish this long before the measured window opens (JIT and heap warm-up of the
   * fresh service); only with `publish`. @default 0
   */
  readonly warmupS?: number;
  /** Bound on waiting for late events after publishing stops. @default 5000 */
  readonly drainTimeoutMs?: number;
}

export interface RunContext {
  /** A running service to use instead of starting one per run. */
  readonly target?: RunningService;
  /**
   * A running service that carries the payload domain (STREAM_DOMAIN=payload), for the
   * runs in that domain when `target` is ours to replace (the smoke test's shared services).
   */
  readonly payloadTarget?: RunningService;
  /**
   * The target is ours to replace (the smoke test's shared service): runs that need
   * service environment (reconnect's maximum stream age) start a fresh service instead.
   * A --target the user runs cannot be restarted, so its runs go without that env.
   */
  readonly launchForEnv?: boolean;
  /** The server runs drive unless they say otherwise. */
  readonly server: 'nest' | 'bare';
  /** Starts the server for a run (the service, or a bare server for `overhead`). */
  readonly launch: (run: TransportRun, opts: { inspect: boolean }) => Promise<RunningService>;
  readonly token?: string;
  readonly progress: (line: string, final?: boolean) => void;
  /** Set on SIGINT: runs stop early and report what they have. */
  readonly aborted: () => boolean;
}
