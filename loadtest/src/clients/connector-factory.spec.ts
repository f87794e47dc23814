import { GrpcConnector } from './grpc-connector';
import { createConnector } from './connector-factory';
import { LeanGrpcConnector } from './lean/lean-grpc-connector';
import { RawGrpcConnector } from './lean/raw-grpc-connector';
import { readsInBatches, readsLean, type ConnectorOptions } from './transport';

/** Which gRPC client a run's unsampled subscribers get, by the run's options. */
describe('createConnector for gRPC', () => {
  const base: ConnectorOptions = { host: '127.0.0.1', httpPort: 1, httpsPort: 2, grpcPort: 3 };

  it('reads below grpc-js through the raw client, a connection per subscriber, as data arrives', () => {
    expect(readsLean('grpc', base)).toBe(true);
    expect(readsInBatches('grpc', base)).toBe(false);
    expect(createConnector('grpc', { ...base, leanGrpc: true })).toBeInstanceOf(RawGrpcConnector);
  });

  it('keeps the lean client for a shared channel, which the raw client does not serve', () => {
    const shared = { ...base, grpcSharedChannel: true, leanGrpc: true };
    expect(createConnector('grpc', shared)).toBeInstanceOf(LeanGrpcConnector);
  });

  it('keeps grpc-js over TLS and for the sampled subscribers', () => {
    const tls = { ...base, grpcTls: { caPem: '', serverName: 'localhost' } };
    expect(readsLean('grpc', tls)).toBe(false);
    expect(createConnector('grpc', { ...tls, leanGrpc: true })).toBeInstanceOf(GrpcConnector);
    expect(createConnector('grpc', base)).toBeInstanceOf(GrpcConnector);
  });
});
