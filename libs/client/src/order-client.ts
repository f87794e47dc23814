import type { Connector, ConnectorFactory } from './transports/connector';
import type { OrderWatch, TransportName, WatchOptions } from './types';
import { TokenSource } from './token-source';
import { connectorFor, connectorOptions, createWatch, tokenSourceOptions } from './watch-order';

/**
 * What every watch of a client shares: the transport, the service, the credentials (one
 * token source: getToken() is asked once per renewal for all of them, and a renewal
 * moves them together, so a shared socket is replaced once, not once per watch).
 */
export type ClientOptions = Omit<WatchOptions, 'after' | 'signal' | 'onConnection'>;

/** What one watch of a client may set for itself. */
export type ClientWatchOptions = Pick<
  WatchOptions,
  'after' | 'signal' | 'onConnection' | 'maxBufferedItems'
>;

/**
 * Watches of many orders over what one transport can share: one socket.io connection
 * (a subscription per order), one gRPC channel (a call per order). SSE and long-poll
 * hold a request per order; what they share is the browser's HTTP/2 connection when the
 * service is reached over HTTPS (see the README).
 */
export interface OrderClient {
  readonly transport: TransportName;
  /** Follows one order, like `watchOrder` with the client's options. */
  watch(orderId: string, options?: ClientWatchOptions): OrderWatch;
  /** Closes every watch of this client that is still running, then the shared connection. */
  close(): void;
}

/** `createClient` of an entry point: `connectors` is what that entry offers. */
export function createOrderClient(
  options: ClientOptions,
  connectors: Partial<Record<TransportName, ConnectorFactory>>,
): OrderClient {
  const shared: Connector = connectorFor(options.transport, connectors)(connectorOptions(options));
  // A watch's end releases nothing shared: the client's close() does.
  const borrowed: Connector = {
    connect: (req) => shared.connect(req),
    ...(shared.tokenPerRequest ? { tokenPerRequest: true } : {}),
    close: () => undefined,
  };
  const own = { [options.transport]: () => borrowed };
  const tokens = new TokenSource(tokenSourceOptions(options));
  const running = new Set<OrderWatch>();
  let closed = false;
  return {
    transport: options.transport,
    watch(orderId, extra = {}) {
      if (closed) throw new TypeError('this client is closed');
      const w = createWatch(orderId, { ...options, ...extra }, own, tokens);
      running.add(w);
      void w.done.then(() => running.delete(w));
      return w;
    },
    close() {
      closed = true;
      for (const w of running) w.close();
      running.clear();
      tokens.stop();
      shared.close();
    },
  };
}
