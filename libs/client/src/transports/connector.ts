import { EXPECTED_DOMAIN_PARAM } from '@app/contracts/expected-domain';
import type { StreamDomain } from '@app/contracts/stream-domain';
import type { StreamItemOf } from '@app/contracts/stream-item';
import type { WireDomain } from './wire-items';

/** One connection attempt, as the watch loop asks a transport for it. */
export interface ConnectRequest {
  readonly orderId: string;
  /** Resume point: the cursor when the attempt starts. */
  readonly afterSeq: number;
  /** The current bearer token (read at each use: it may be refreshed meanwhile). */
  token(): string | undefined;
  /** Changes whenever the token does. */
  tokenVersion(): number;
  /** Aborted when the watch ends or the connection is dropped on purpose. */
  readonly signal: AbortSignal;
  /**
   * The service accepted the stream. A transport that reconnects by itself (EventSource)
   * calls it again after each of its reconnects, with the seq it resumed after.
   */
  opened(afterSeq?: number): void;
  /** One item, in order (of the domain's kinds, or the envelope's). */
  item(item: StreamItemOf): void;
  /**
   * The service ended the stream but the transport is resuming it by itself
   * (EventSource after `end`), for the life-cycle callback.
   */
  ended?(reason: string): void;
  /** The current cursor (for transports that resume by themselves). */
  cursor(): number;
}

/**
 * How a connection ended without an error. `reason` is the service's StreamEndReason
 * (`completed` ends the watch); `retryAfterMs` its reconnect advice.
 */
export interface ConnectionEnd {
  readonly reason: string;
  readonly retryAfterMs?: number;
}

/**
 * A transport: opens one connection and settles when it is over. Resolves with the
 * service's end; rejects with a WatchError for a refusal (HTTP status, gRPC status,
 * error ack) or any other error for a dropped connection. Must release everything
 * (sockets, listeners, timers) before it settles and when `signal` aborts.
 */
export interface Connector {
  connect(req: ConnectRequest): Promise<ConnectionEnd>;
  /**
   * Reads the token for every request (long-poll), so a new token needs no new
   * connection. Otherwise the watch renews an open connection when the token changes.
   */
  readonly tokenPerRequest?: boolean;
  /** Releases what the connector keeps between attempts (a socket.io Manager, a gRPC channel). */
  close(): void;
}

/**
 * What a connector is built with. `D` is what it needs of the domain: a transport needs
 * one (`WireDomain` for the JSON transports, a `StreamDomain` for gRPC, whose proto codec
 * it reads); the watch hands over its own, undefined when it names none, and the entry
 * point's table of connectors supplies its default (`withDefaultDomain`).
 */
export interface ConnectorOptions<D = StreamDomain | undefined> {
  readonly baseUrl: string;
  readonly longPollWaitS: number;
  readonly useEventSource: boolean;
  /** The domain of the stream's events (their names and messages on each wire). */
  readonly domain: D;
}

export type ConnectorFactory<D = StreamDomain | undefined> = (
  opts: ConnectorOptions<D>,
) => Connector;

/**
 * A transport's connector for a watch that may name no domain: `fallback` then. The
 * transports know no domain; the entry points choose the default (the order domain's
 * descriptor for the JSON transports, its proto codec too for gRPC).
 */
export function withDefaultDomain<D extends WireDomain>(
  factory: ConnectorFactory<D | StreamDomain>,
  fallback: D,
): ConnectorFactory {
  return (opts) => factory({ ...opts, domain: opts.domain ?? fallback });
}

/** `baseUrl` without trailing slashes, then `/v1/orders/<id>/<suffix>`. */
export function orderUrl(baseUrl: string, orderId: string, suffix: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/v1/orders/${encodeURIComponent(orderId)}/${suffix}`;
}

/** `&domain=<name>`: the domain the client decodes, which the service checks against its own. */
export function domainQuery(domain: { readonly name: string }): string {
  return `&${EXPECTED_DOMAIN_PARAM}=${encodeURIComponent(domain.name)}`;
}

export function bearer(token: string | undefined): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}
