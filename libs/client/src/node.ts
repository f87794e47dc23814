import { BROWSER_CONNECTORS } from './index';
import { grpcConnector } from './transports/grpc';
import type { OrderWatch, WatchOptions } from './types';
import { createWatch } from './watch-order';

export * from './index';

const NODE_CONNECTORS = { ...BROWSER_CONNECTORS, grpc: grpcConnector };

/** `watchOrder` with every transport, gRPC included (Node only: it needs @grpc/grpc-js). */
export function watchOrder(orderId: string, options: WatchOptions): OrderWatch {
  return createWatch(orderId, options, NODE_CONNECTORS);
}
