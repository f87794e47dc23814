import { GrpcConnector } from './grpc-connector';
import { LeanGrpcConnector } from './lean/lean-grpc-connector';
import { RawGrpcConnector } from './lean/raw-grpc-connector';
import { RawHttp2Getter } from './lean/raw-http2-getter';
import { Http1Getter, Http2Getter, type HttpGetter } from './http-stream';
import {
  DEFAULT_LONG_POLL_WAIT_S,
  DEFAULT_SHORT_POLL_INTERVAL_MS,
  LongPollConnector,
} from './long-poll-connector';
import { NchanLongPollConnector, NchanWebSocketConnector } from '../nchan/nchan-connectors';
import { SocketIoConnector } from './socketio-connector';
import type { ReadBatcher } from './read-batcher';
import { SseConnector } from './sse-connector';
import { WebSocketConnector } from './websocket-connector';
import {
  readsInBatches,
  readsLean,
  readsRawHttp2,
  type Connector,
  type ConnectorOptions,
  type TransportName,
} from './transport';

/** The HTTP/2 client of an -h2 transport: the raw one when asked for and allowed, else `node:http2`'s. */
export function http2Getter(transport: TransportName, o: ConnectorOptions): HttpGetter {
  return o.rawHttp2 === true && readsRawHttp2(transport, o)
    ? new RawHttp2Getter(o.host, o.httpsPort, o.h2StreamsPerSession)
    : new Http2Getter(o.host, o.httpsPort, o.h2StreamsPerSession);
}

/** Builds the connector of one transport; the ports may be a proxy's. */
export function createConnector(transport: TransportName, o: ConnectorOptions): Connector {
  const profile = o.headers ?? 'bare';
  const h1 = (batcher?: ReadBatcher): Http1Getter => new Http1Getter(o.host, o.httpPort, batcher);
  const h2 = (): HttpGetter => http2Getter(transport, o);
  // Only SSE over HTTP/1.1 and socket.io read in batches (see ConnectorOptions.readBatcher).
  const batcher = readsInBatches(transport, o) ? o.readBatcher : undefined;
  const longPoll = { waitS: o.longPollWaitS ?? DEFAULT_LONG_POLL_WAIT_S, intervalMs: 0 };
  if (o.peer === 'nchan') {
    // Nchan's SSE is the service's format on the same route (`event: status` included).
    if (transport === 'sse') return new SseConnector(transport, h1(), profile, o.token);
    if (transport === 'longpoll') return new NchanLongPollConnector(h1());
    if (transport === 'ws') return new NchanWebSocketConnector(o.host, o.httpPort);
    throw new TypeError(`the Nchan peer serves sse, longpoll and ws, not ${transport}`);
  }
  switch (transport) {
    case 'grpc':
      if (o.leanGrpc === true && readsLean(transport, o)) {
        const address = `${o.host}:${o.grpcPort}`;
        return o.grpcSharedChannel === true
          ? new LeanGrpcConnector(address, o.token)
          : new RawGrpcConnector(address, o.token);
      }
      return new GrpcConnector(
        `${o.host}:${o.grpcPort}`,
        o.token,
        o.grpcSharedChannel ?? false,
        o.grpcTls,
      );
    case 'sse':
      return new SseConnector(transport, h1(batcher), profile, o.token);
    case 'sse-h2':
      return new SseConnector(transport, h2(), profile, o.token);
    case 'ws':
      return new SocketIoConnector(`http://${o.host}:${o.httpPort}`, profile, o.token, batcher);
    case 'websocket':
      return new WebSocketConnector(o.host, o.httpPort, profile, o.token);
    case 'longpoll':
      return new LongPollConnector(transport, h1(), profile, o.token, longPoll);
    case 'longpoll-h2':
      return new LongPollConnector(transport, h2(), profile, o.token, longPoll);
    case 'shortpoll':
      return new LongPollConnector(transport, h1(), profile, o.token, {
        waitS: 0,
        intervalMs: o.shortPollIntervalMs ?? DEFAULT_SHORT_POLL_INTERVAL_MS,
      });
  }
}
