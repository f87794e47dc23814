import type { ConnectorFactory } from './transports/connector';
import { longPollConnector } from './transports/long-poll';
import { sseConnector } from './transports/sse';
import { socketIoConnector } from './transports/socket-io';
import type { OrderWatch, TransportName, WatchOptions } from './types';
import { createWatch } from './watch-order';

export * from './types';
export { WatchError } from './watch-error';
export { DEFAULT_LONG_POLL_WAIT_S, DEFAULT_MAX_BUFFERED_ITEMS } from './watch-order';
export { DEFAULT_BACKOFF_BASE_MS, DEFAULT_BACKOFF_MAX_MS } from './backoff';
export { DEFAULT_REFRESH_BEFORE_EXPIRY_MS } from './token-source';

/** The transports every platform has (gRPC only in the Node entry point). */
export const BROWSER_CONNECTORS: Readonly<Partial<Record<TransportName, ConnectorFactory>>> = {
  sse: sseConnector,
  ws: socketIoConnector,
  longpoll: longPollConnector,
};

/**
 * Follows one order: `for await (const item of watchOrder('order-1', {transport: 'sse',
 * baseUrl}))`. Resumes by seq after every disconnect, drops duplicates, reports gaps,
 * and ends with `end` (completed, aborted, or a permanent error).
 */
export function watchOrder(orderId: string, options: WatchOptions): OrderWatch {
  return createWatch(orderId, options, BROWSER_CONNECTORS);
}
