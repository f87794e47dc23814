import { BROWSER_CONNECTORS } from './index';
import { lazyGrpcConnector } from './transports/grpc-lazy';
import type { OrderWatch, WatchOptions } from './types';
import { createWatch } from './watch-order';

export * from './index';

const NODE_CONNECTORS = { ...BROWSER_CONNECTORS, grpc: lazyGrpcConnector };

/**
 * `watchOrder` with every transport, gRPC included (Node only: it needs @grpc/grpc-js and
 * @grpc/proto-loader, loaded when a watch first asks for gRPC).
 */
export function watchOrder(orderId: string, options: WatchOptions): OrderWatch {
  return createWatch(orderId, options, NODE_CONNECTORS);
}
