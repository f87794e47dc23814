import * as http2 from 'node:http2';
import { status as GrpcCode } from '@grpc/grpc-js';
import { orderStatusClientCtor } from '../grpc-connector';
import { framedMessage, grpcHeaders } from '../grpc-frame';
import type { Connector, OpenStream, StreamHandlers } from '../transport';
import { CONNECTION_LOST, GrpcCallReport } from './grpc-call-report';
import type { SubscribeResponseMsg } from './lean-proto';
import { PrefixedSplitter } from './prefixed-splitter';

/** gRPC's length-prefixed message: a compressed flag byte and a 4-byte big-endian length. */
const PREFIX_BYTES = 5;

/**
 * `OrderStatusService.Subscribe` over `node:http2` with gRPC's framing written out
 * (grpc.io, "gRPC over HTTP2"), for the subscribers whose latency is not sampled.
 *
 * Why: at scale every subscriber is a gRPC client in the generator's one process, and
 * grpc-js spends its own work on every message above Node's HTTP/2 stream (a stream
 * decoder, a chain of interceptor calls, a Readable for the call and its 'data' event),
 * which the subscribers that only count seqs do not need. What the server sees is the
 * same: the same request (POST, `application/grpc`, `te: trailers`, the bearer token),
 * every call on one HTTP/2 connection as a shared grpc-js channel has them, and its
 * messages read as they arrive (HTTP/2 flow control is the session's, as with grpc-js).
 * The sampled subscribers keep grpc-js (GrpcConnector): latency is timed through the
 * client an application would use.
 *
 * For runs with a shared channel (`--grpc-shared`); with a connection per subscriber the
 * raw client (RawGrpcConnector) is cheaper. Plaintext only (the service's own gRPC port);
 * TLS through nginx keeps grpc-js.
 */
export class LeanGrpcConnector implements Connector {
  readonly transport = 'grpc' as const;
  requests = 0;
  private shared?: http2.ClientHttp2Session;

  constructor(
    private readonly address: string,
    private readonly token: string | undefined,
  ) {}

  /** The one session, made again once it has closed (a dropped connection, GOAWAY). */
  private session(): http2.ClientHttp2Session {
    if (this.shared && !this.shared.closed && !this.shared.destroyed) return this.shared;
    const s = http2.connect(`http://${this.address}`);
    // A session's own errors reach its streams as their 'close'; this keeps them from
    // being thrown as unhandled 'error' events.
    s.on('error', () => undefined);
    this.shared = s;
    return s;
  }

  open(orderId: string, afterSeq: number, handlers: StreamHandlers): OpenStream {
    this.requests += 1;
    const session = this.session();
    const method = orderStatusClientCtor().service.Subscribe;
    const body = method.requestSerialize({ orderId, afterSeq });
    const req = session.request(grpcHeaders(this.token));
    req.end(framedMessage(body));

    const full = (b: Buffer): SubscribeResponseMsg =>
      method.responseDeserialize(b) as SubscribeResponseMsg;
    const report = new GrpcCallReport(handlers, full, (failed) => {
      if (failed && !req.closed) req.close(http2.constants.NGHTTP2_CANCEL);
    });
    const decoder = new MessageDecoder((msg) => report.message(msg));
    req.on('response', (h) => report.responseHeaders(h));
    req.on('data', (chunk: Buffer) => {
      if (!decoder.push(chunk)) report.fail(GrpcCode.INTERNAL);
    });
    req.on('trailers', (h) => report.status(h));
    let lost = false;
    req.on('error', (err: Error & { code?: string; cause?: { code?: string } }) => {
      // A lost session ends its streams with ERR_HTTP2_STREAM_CANCEL, its own error the cause.
      lost ||= CONNECTION_LOST.has(err.code ?? '') || CONNECTION_LOST.has(err.cause?.code ?? '');
    });
    // Closed with no status: reset by the server, or the connection lost (Node then resets
    // the stream with CANCEL on a destroyed session, which grpc-js too reports as
    // UNAVAILABLE rather than CANCELLED).
    req.on('close', () => {
      if (lost || session.destroyed) report.lost();
      else report.reset(req.rstCode);
    });

    return {
      close: () => {
        report.close();
        if (!req.closed) req.close(http2.constants.NGHTTP2_CANCEL);
      },
      pause: () => req.pause(),
      resume: () => req.resume(),
    };
  }

  async close(): Promise<void> {
    this.shared?.destroy();
    this.shared = undefined;
  }
}

/**
 * Splits a gRPC response body into its messages, whatever the chunking of HTTP/2 DATA
 * frames. push() returns false on a message the client cannot read (compressed: the
 * request asks for none).
 */
export class MessageDecoder {
  private readonly splitter: PrefixedSplitter;

  constructor(onMessage: (msg: Buffer) => void) {
    this.splitter = new PrefixedSplitter(
      PREFIX_BYTES,
      (buf, at) => (buf[at] === 0 ? buf.readUInt32BE(at + 1) : -1),
      (buf, at, end) => onMessage(buf.subarray(at + PREFIX_BYTES, end)),
    );
  }

  push(chunk: Buffer): boolean {
    return this.splitter.push(chunk);
  }
}
