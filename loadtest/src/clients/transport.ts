import type { ReadBatcher } from './read-batcher';
import type { WireEvent, WireReset, WireSkipped } from './wire-types';

export const TRANSPORTS = [
  'grpc',
  'sse',
  'sse-h2',
  'ws',
  'websocket',
  'longpoll',
  'longpoll-h2',
  'shortpoll',
] as const;
export type TransportName = (typeof TRANSPORTS)[number];

export function isTransportName(v: string): v is TransportName {
  return (TRANSPORTS as readonly string[]).includes(v);
}

/**
 * Callbacks of one open stream. A connector calls at most one of onEnd/onError, once,
 * and nothing after it.
 */
export interface StreamHandlers {
  /** The subscription is live (response headers, subscribe ack, first poll answered). */
  onOpen(): void;
  onEvent(event: WireEvent): void;
  onReset(reset: WireReset): void;
  /** The service dropped these seqs for this (slow) subscriber and said so. */
  onSkipped(skipped: WireSkipped): void;
  /** The server ended the stream with a reason (`completed`, `max_age`, `overflow`, ...). */
  onEnd(reason: string): void;
  /** The stream failed; `code` is an HTTP status, a gRPC status name or a socket error code. */
  onError(code: string): void;
}

export interface OpenStream {
  /** Client-side close; no handler is called after it. */
  close(): void;
  /**
   * Stops or resumes reading from the socket (back-pressure scenario). Optional: a
   * transport without per-stream flow control cannot pause.
   */
  pause?(): void;
  resume?(): void;
}

export interface GrpcTls {
  readonly caPem: string;
  readonly serverName: string;
}

/** Header profiles of the bytes scenario (seed 001 ran every transport with both). */
export type HeaderProfile = 'bare' | 'browser';

export interface ConnectorOptions {
  readonly host: string;
  /** Port of plain HTTP/1.1 (SSE, long-poll, socket.io). */
  readonly httpPort: number;
  /** Port of TLS with ALPN h2 (the -h2 variants). */
  readonly httpsPort: number;
  readonly grpcPort: number;
  /**
   * gRPC over TLS (nginx's `grpc_pass` port in the cluster scenario): the CA's PEM and the
   * name the certificate is for (a TLS server name may not be an IP, RFC 6066 section 3).
   * Without it gRPC is plaintext h2, as the service's own port speaks.
   */
  readonly grpcTls?: GrpcTls;
  /** Bearer token for when auth is on; sent as header, socket.io auth.token or gRPC metadata. */
  readonly token?: string;
  /** @default 'bare' */
  readonly headers?: HeaderProfile;
  /** gRPC: one connection shared by all subscribers instead of one each. @default false */
  readonly grpcSharedChannel?: boolean;
  /** HTTP/2: streams per session before another session is opened. @default 100 */
  readonly h2StreamsPerSession?: number;
  /** Long-poll hold time asked of the server, seconds. @default 30 */
  readonly longPollWaitS?: number;
  /**
   * An outside server with its own protocol for the same routes (Nchan: raw WebSocket,
   * its own long-poll cursor); undefined for the service and the bare server.
   */
  readonly peer?: 'nchan';
  /** Short-poll interval. @default 250 */
  readonly shortPollIntervalMs?: number;
  /**
   * Read every stream's socket in batches (ReadBatcher): SSE over HTTP/1.1 and socket.io;
   * ignored by the others (an HTTP/2 session reads its socket itself, a poll is read
   * when it is answered, and gRPC's clients read as data arrives: batched gRPC reads
   * lengthened the server's tail, docs/performance-notes.md). @default undefined
   */
  readonly readBatcher?: ReadBatcher;
  /**
   * gRPC: read through a client below grpc-js, for the unsampled subscribers: the raw one
   * (RawGrpcConnector, HTTP/2 framed by hand, a connection per call), or over a shared
   * channel the lean one (LeanGrpcConnector, `node:http2`). Plaintext only, ignored with
   * grpcTls. @default false, grpc-js
   */
  readonly leanGrpc?: boolean;
  /**
   * HTTP/2 streams (sse-h2, longpoll-h2): read through the raw client (RawHttp2Getter,
   * HTTP/2 framed by hand on TLS) instead of `node:http2`, for the unsampled subscribers.
   * @default false
   */
  readonly rawHttp2?: boolean;
}

/** The transports whose connectors read in batches when given a ReadBatcher. */
export function readsInBatches(transport: TransportName, o: { readonly peer?: 'nchan' }): boolean {
  return o.peer === undefined && (transport === 'sse' || transport === 'ws');
}

/** Whether a gRPC connector with these options can read through a client below grpc-js. */
export function readsLean(
  transport: TransportName,
  o: { readonly peer?: 'nchan'; readonly grpcTls?: GrpcTls },
): boolean {
  return o.peer === undefined && transport === 'grpc' && o.grpcTls === undefined;
}

/** Whether an HTTP/2 transport's connector can read through the raw HTTP/2 client. */
export function readsRawHttp2(transport: TransportName, o: { readonly peer?: 'nchan' }): boolean {
  return o.peer === undefined && (transport === 'sse-h2' || transport === 'longpoll-h2');
}

/** Opens subscriptions for one transport; owns the connections it creates. */
export interface Connector {
  readonly transport: TransportName;
  /** HTTP requests sent so far (polling transports; 1 per stream otherwise). */
  readonly requests: number;
  open(orderId: string, afterSeq: number, handlers: StreamHandlers): OpenStream;
  close(): Promise<void>;
}
