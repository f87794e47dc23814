import { GrpcConnector } from './grpc-connector';
import { createConnector } from './connector-factory';
import { LeanGrpcConnector } from './lean/lean-grpc-connector';
import { RawGrpcConnector } from './lean/raw-grpc-connector';
import { ReadBatcher } from './read-batcher';
import { readsInBatches, type ConnectorOptions } from './transport';

/** Which gRPC client a run's unsampled subscribers get, by the run's options. */
describe('createConnector for gRPC', () => {
  const base: ConnectorOptions = { host: '127.0.0.1', httpPort: 1, httpsPort: 2, grpcPort: 3 };
  const batcher = new ReadBatcher(1_000);
  afterAll(() => batcher.stop());

  it('reads in batches through the raw client, one connection per subscriber', () => {
    expect(readsInBatches('grpc', base)).toBe(true);
    expect(createConnector('grpc', { ...base, readBatcher: batcher })).toBeInstanceOf(
      RawGrpcConnector,
    );
  });

  it('keeps the lean client for a shared channel, which the raw client does not serve', () => {
    const shared = { ...base, grpcSharedChannel: true };
    expect(readsInBatches('grpc', shared)).toBe(false);
    expect(createConnector('grpc', { ...shared, leanGrpc: true })).toBeInstanceOf(
      LeanGrpcConnector,
    );
  });

  it('keeps grpc-js over TLS and for the sampled subscribers', () => {
    const tls = { ...base, grpcTls: { caPem: '', serverName: 'localhost' } };
    expect(readsInBatches('grpc', tls)).toBe(false);
    expect(createConnector('grpc', base)).toBeInstanceOf(GrpcConnector);
  });
});
