import type { ConnectorFactory } from './transports/connector';
import { longPollConnector } from './transports/long-poll';
import { sseConnector } from './transports/sse';
import { socketIoConnector } from './transports/socket-io';
import { websocketConnector } from './transports/websocket';
import type { TransportName } from './types';

/**
 * The transports every platform has (gRPC only in the Node entry point). A module of its
 * own, not exported by the entry points: the connectors are the library's inside, and
 * their types would put the engine's item types in the published .d.mts beside the order
 * domain's, under the same names.
 */
export const BROWSER_CONNECTORS: Readonly<Partial<Record<TransportName, ConnectorFactory>>> = {
  sse: sseConnector,
  ws: socketIoConnector,
  websocket: websocketConnector,
  longpoll: longPollConnector,
};
