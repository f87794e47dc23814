import * as http2 from 'node:http2';
import { status as GrpcCode } from '@grpc/grpc-js';
import { StreamEndTrailer } from '@app/contracts/grpc-trailers';
import { dispatchSubscribeResponse, orderStatusClientCtor } from '../grpc-connector';
import { framedMessage, grpcHeaders } from '../grpc-frame';
import type { Connector, OpenStream, StreamHandlers } from '../transport';
import { leanSubscribeResponse, type SubscribeResponseMsg } from './lean-proto';

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
 * one HTTP/2 connection per subscriber unless shared, and its messages read as they
 * arrive (HTTP/2 flow control is the session's, as with grpc-js). The sampled
 * subscribers keep grpc-js (GrpcConnector): latency is timed through the client an
 * application would use.
 *
 * Plaintext only (the service's own gRPC port); TLS through nginx keeps grpc-js.
 */
export class LeanGrpcConnector implements Connector {
  readonly transport = 'grpc' as const;
  requests = 0;
  private shared?: http2.ClientHttp2Session;
  private readonly sessions = new Set<http2.ClientHttp2Session>();

  constructor(
    private readonly address: string,
    private readonly token: string | undefined,
    private readonly sharedChannel: boolean,
  ) {}

  private session(): http2.ClientHttp2Session {
    if (this.sharedChannel && this.shared && !this.shared.closed && !this.shared.destroyed) {
      return this.shared;
    }
    const s = http2.connect(`http://${this.address}`);
    // A session's own errors reach its streams as their 'close'; this keeps them from
    // being thrown as unhandled 'error' events.
    s.on('error', () => undefined);
    this.sessions.add(s);
    s.once('close', () => this.sessions.delete(s));
    if (this.sharedChannel) this.shared = s;
    return s;
  }

  open(orderId: string, afterSeq: number, handlers: StreamHandlers): OpenStream {
    this.requests += 1;
    const session = this.session();
    const own = !this.sharedChannel;
    const method = orderStatusClientCtor().service.Subscribe;
    const body = method.requestSerialize({ orderId, afterSeq });
    const req = session.request(grpcHeaders(this.token));
    req.end(framedMessage(body));

    let done = false;
    let opened = false;
    const finish = (report: () => void): void => {
      if (done) return;
      done = true;
      if (own) session.close();
      report();
    };
    const open = (): void => {
      if (opened) return;
      opened = true;
      handlers.onOpen();
    };
    const full = (b: Buffer): SubscribeResponseMsg =>
      method.responseDeserialize(b) as SubscribeResponseMsg;
    const fail = (code: GrpcCode): void => {
      finish(() => handlers.onError(`grpc_${GrpcCode[code]}`));
      if (!req.closed) req.close(http2.constants.NGHTTP2_CANCEL);
    };
    const decoder = new MessageDecoder((msg) => {
      if (done) return;
      open();
      let m: SubscribeResponseMsg;
      try {
        m = leanSubscribeResponse(msg, full);
      } catch {
        // A message that does not decode ends the call, as grpc-js ends it.
        fail(GrpcCode.INTERNAL);
        return;
      }
      dispatchSubscribeResponse(m, handlers);
    });
    // The call's status: in the trailers, or in the response headers of a trailers-only
    // answer (an error before any message).
    const onStatus = (h: http2.IncomingHttpHeaders): void => {
      const code = h['grpc-status'];
      if (code === undefined) return;
      finish(() => {
        const n = Number(code) as GrpcCode;
        if (n === GrpcCode.OK) return handlers.onEnd('completed');
        const reason = h[StreamEndTrailer.Reason];
        // A server-ended stream (max age, shutdown) is UNAVAILABLE naming its reason.
        if (n === GrpcCode.UNAVAILABLE && typeof reason === 'string') handlers.onEnd(reason);
        else handlers.onError(`grpc_${GrpcCode[n] ?? code}`);
      });
    };
    req.on('response', (h) => {
      // Headers without a status open the call (grpc-js emits its metadata), whatever
      // the HTTP status; a trailers-only answer does not.
      if (h['grpc-status'] === undefined) open();
      if (h[':status'] !== 200) fail(codeOfHttpStatus(h[':status']));
      else onStatus(h);
    });
    req.on('data', (chunk: Buffer) => {
      if (!decoder.push(chunk)) fail(GrpcCode.INTERNAL);
    });
    req.on('trailers', onStatus);
    let lost = false;
    req.on('error', (err: Error & { code?: string; cause?: { code?: string } }) => {
      // A lost session ends its streams with ERR_HTTP2_STREAM_CANCEL, its own error the cause.
      lost ||= CONNECTION_LOST.has(err.code ?? '') || CONNECTION_LOST.has(err.cause?.code ?? '');
    });
    // Closed with no status: reset by the server, or the connection lost (Node then resets
    // the stream with CANCEL on a destroyed session, which grpc-js too reports as
    // UNAVAILABLE rather than CANCELLED).
    req.on('close', () =>
      fail(lost || session.destroyed ? GrpcCode.UNAVAILABLE : codeOfReset(req.rstCode)),
    );

    return {
      close: () => {
        done = true;
        if (!req.closed) req.close(http2.constants.NGHTTP2_CANCEL);
        if (own) session.close();
      },
      pause: () => req.pause(),
      resume: () => req.resume(),
    };
  }

  async close(): Promise<void> {
    for (const s of this.sessions) s.destroy();
    this.sessions.clear();
    this.shared = undefined;
  }
}

/** Errors of a stream whose connection failed or dropped: UNAVAILABLE, as grpc-js says. */
const CONNECTION_LOST = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE']);

/** The status of a call answered with a non-200 HTTP status (grpc-js's mapping). */
function codeOfHttpStatus(status: number | undefined): GrpcCode {
  switch (status) {
    case 400:
      return GrpcCode.INTERNAL;
    case 401:
      return GrpcCode.UNAUTHENTICATED;
    case 403:
      return GrpcCode.PERMISSION_DENIED;
    case 404:
      return GrpcCode.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GrpcCode.UNAVAILABLE;
    default:
      return GrpcCode.UNKNOWN;
  }
}

/** The status of a call whose stream was reset before any status (grpc-js's mapping). */
function codeOfReset(rstCode: number): GrpcCode {
  const c = http2.constants;
  switch (rstCode) {
    case c.NGHTTP2_REFUSED_STREAM:
      return GrpcCode.UNAVAILABLE;
    case c.NGHTTP2_CANCEL:
      return GrpcCode.CANCELLED;
    case c.NGHTTP2_ENHANCE_YOUR_CALM:
      return GrpcCode.RESOURCE_EXHAUSTED;
    case c.NGHTTP2_INADEQUATE_SECURITY:
      return GrpcCode.PERMISSION_DENIED;
    default:
      return GrpcCode.INTERNAL;
  }
}

/**
 * Splits a gRPC response body into its messages, whatever the chunking of HTTP/2 DATA
 * frames. push() returns false on a message the client cannot read (compressed: the
 * request asks for none).
 */
export class MessageDecoder {
  private pending: Buffer | undefined;

  constructor(private readonly onMessage: (msg: Buffer) => void) {}

  push(chunk: Buffer): boolean {
    let buf = chunk;
    if (this.pending !== undefined) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
    }
    let at = 0;
    while (buf.length - at >= PREFIX_BYTES) {
      if (buf[at] !== 0) return false;
      const len = buf.readUInt32BE(at + 1);
      if (buf.length - at - PREFIX_BYTES < len) break;
      this.onMessage(buf.subarray(at + PREFIX_BYTES, at + PREFIX_BYTES + len));
      at += PREFIX_BYTES + len;
    }
    if (at < buf.length) this.pending = buf.subarray(at);
    return true;
  }
}
