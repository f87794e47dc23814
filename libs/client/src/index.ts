import { BROWSER_CONNECTORS } from './browser-connectors';
import { createOrderClient, type ClientOptions, type OrderClient } from './order-client';
import type { OrderWatch, WatchOptions } from './types';
import { createWatch } from './watch-order';

export * from './types';
export { WatchError } from './watch-error';
export type { DomainMismatch } from '@app/contracts/expected-domain';
export type { ClientOptions, ClientWatchOptions, OrderClient } from './order-client';
export { DEFAULT_LONG_POLL_WAIT_S, DEFAULT_MAX_BUFFERED_ITEMS } from './watch-order';
export { DEFAULT_BACKOFF_BASE_MS, DEFAULT_BACKOFF_MAX_MS } from './backoff';
export { DEFAULT_REFRESH_BEFORE_EXPIRY_MS } from './token-source';

/**
 * Follows one order: `for await (const item of watchOrder('order-1', {transport: 'sse',
 * baseUrl}))`. Resumes by seq after every disconnect, drops duplicates, reports gaps,
 * and ends with `end` (completed, aborted, or a permanent error).
 */
export function watchOrder(orderId: string, options: WatchOptions): OrderWatch {
  return createWatch(orderId, options, BROWSER_CONNECTORS);
}

/**
 * Many orders over one connection where the transport can carry them (socket.io: one
 * socket; gRPC: one channel): `const c = createClient({transport: 'ws', baseUrl, token});
 * c.watch('order-1'); c.watch('order-2')`.
 */
export function createClient(options: ClientOptions): OrderClient {
  return createOrderClient(options, BROWSER_CONNECTORS);
}
