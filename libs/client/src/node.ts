import { ORDER_DESCRIPTOR } from '@app/order-domain/order-descriptor';
import { ORDER_DOMAIN } from '@app/order-domain/order-domain';
import { BROWSER_CONNECTORS } from './browser-connectors';
import { createOrderClient, type ClientOptions, type OrderClient } from './order-client';
import { lazyGrpcConnector } from './transports/grpc-lazy';
import {
  platformWebSocket,
  websocketConnectorWith,
  type WebSocketClass,
} from './transports/websocket';
import { withDefaultDomain } from './transports/connector';
import type { OrderWatch, WatchOptions } from './types';
import { createWatch } from './watch-order';

export * from './index';

/**
 * `ws` (an optional peer, there wherever socket.io-client is) when installed: Node's global
 * WebSocket reports every failure as a bare error, `ws` names the cause (refused, TLS, 403).
 */
const nodeWebSocket = (): Promise<WebSocketClass | undefined> =>
  import('ws').then(
    (m) => m.WebSocket as unknown as WebSocketClass,
    () => platformWebSocket(),
  );

/** As in the browser's, the order domain when the watch names none (gRPC: its proto codec too). */
const NODE_CONNECTORS = {
  ...BROWSER_CONNECTORS,
  websocket: withDefaultDomain(websocketConnectorWith(nodeWebSocket), ORDER_DESCRIPTOR),
  grpc: withDefaultDomain(lazyGrpcConnector, ORDER_DOMAIN),
};

/**
 * `watchOrder` with every transport, gRPC included (Node only: it needs @grpc/grpc-js and
 * @grpc/proto-loader, loaded when a watch first asks for gRPC).
 */
export function watchOrder(orderId: string, options: WatchOptions): OrderWatch {
  return createWatch(orderId, options, NODE_CONNECTORS);
}

/** `createClient` with every transport, gRPC included (one channel, a call per order). */
export function createClient(options: ClientOptions): OrderClient {
  return createOrderClient(options, NODE_CONNECTORS);
}
