import { ORDER_DESCRIPTOR } from '@app/order-domain/order-descriptor';
import { withDefaultDomain, type ConnectorFactory } from './transports/connector';
import { longPollConnector } from './transports/long-poll';
import { sseConnector } from './transports/sse';
import { socketIoConnector } from './transports/socket-io';
import { websocketConnector } from './transports/websocket';
import type { TransportName } from './types';

/**
 * The transports every platform has (gRPC only in the Node entry point), each reading the
 * order domain's descriptor when the watch names no domain (the library's public default,
 * `WatchOptions.domain`; the transports themselves know no domain). A module of its own,
 * not exported by the entry points: the connectors are the library's inside, and their
 * types would put the engine's item types in the published .d.mts beside the order
 * domain's, under the same names.
 */
export const BROWSER_CONNECTORS: Readonly<Partial<Record<TransportName, ConnectorFactory>>> = {
  sse: withDefaultDomain(sseConnector, ORDER_DESCRIPTOR),
  ws: withDefaultDomain(socketIoConnector, ORDER_DESCRIPTOR),
  websocket: withDefaultDomain(websocketConnector, ORDER_DESCRIPTOR),
  longpoll: withDefaultDomain(longPollConnector, ORDER_DESCRIPTOR),
};
