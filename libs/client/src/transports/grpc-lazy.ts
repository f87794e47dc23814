import { ErrorCode } from '@app/contracts/gateway-error';
import type { StreamDomain } from '@app/contracts/stream-domain';
import { WatchError } from '../watch-error';
import type { Connector, ConnectorFactory } from './connector';

/** What the gRPC transport needs beyond the library: optional peers of the package. */
export const GRPC_PEERS = ['@grpc/grpc-js', '@grpc/proto-loader'] as const;

function missingPeers(): string[] {
  return GRPC_PEERS.filter((name) => {
    try {
      require.resolve(name);
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * The gRPC connector, loaded on first use: a team that follows orders over SSE,
 * socket.io or long-poll need not install gRPC (the package declares it an optional
 * peer). A missing peer is an installation error, so `watchOrder()` throws at once
 * instead of a watch that retries for ever.
 */
export const lazyGrpcConnector: ConnectorFactory<StreamDomain> = (opts) => {
  const missing = missingPeers();
  if (missing.length > 0) {
    throw new TypeError(
      `transport 'grpc' needs ${missing.join(' and ')}: npm install ${missing.join(' ')}`,
    );
  }
  // Loading the module or making the channel (a target it cannot parse) fails the same way
  // on every attempt: a permanent error, not a watch that retries for ever.
  const loaded: Promise<Connector> = import('./grpc.js')
    .then((m) => m.grpcConnector(opts))
    .catch((err: unknown) => {
      const why = err instanceof Error ? err.message : String(err);
      throw new WatchError(ErrorCode.InvalidArgument, `transport 'grpc' could not start: ${why}`);
    });
  loaded.catch(() => undefined);
  return {
    connect: async (req) => (await loaded).connect(req),
    close: () => {
      loaded.then((c) => c.close()).catch(() => undefined);
    },
  };
};
