import { GrpcConnector } from './grpc-connector';
import { createConnector, http2Getter } from './connector-factory';
import { Http2Getter } from './http-stream';
import { LeanGrpcConnector } from './lean/lean-grpc-connector';
import { RawGrpcConnector } from './lean/raw-grpc-connector';
import { RawHttp2Getter } from './lean/raw-http2-getter';
import { readsInBatches, readsLean, readsRawHttp2, type ConnectorOptions } from './transport';

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

/** Which HTTP/2 client a run's unsampled subscribers get. */
describe('http2Getter', () => {
  const base: ConnectorOptions = { host: '127.0.0.1', httpPort: 1, httpsPort: 2, grpcPort: 3 };

  it('gives the raw client to long-poll and SSE over HTTP/2 when asked', () => {
    for (const t of ['longpoll-h2', 'sse-h2'] as const) {
      expect(readsRawHttp2(t, base)).toBe(true);
      expect(http2Getter(t, { ...base, rawHttp2: true })).toBeInstanceOf(RawHttp2Getter);
      expect(http2Getter(t, base)).toBeInstanceOf(Http2Getter);
    }
  });

  it('keeps node:http2 for the other transports and for Nchan', () => {
    for (const t of ['longpoll', 'sse', 'grpc'] as const)
      expect(readsRawHttp2(t, base)).toBe(false);
    const nchan = { ...base, peer: 'nchan' as const, rawHttp2: true };
    expect(readsRawHttp2('longpoll-h2', nchan)).toBe(false);
    expect(http2Getter('longpoll-h2', nchan)).toBeInstanceOf(Http2Getter);
  });
});
