import { connect, type Socket } from 'node:net';
import { status as GrpcCode } from '@grpc/grpc-js';
import { orderStatusClientCtor } from '../grpc-connector';
import { framedMessage, grpcHeaders } from '../grpc-frame';
import type { Connector, OpenStream, StreamHandlers } from '../transport';
import { GrpcCallReport } from './grpc-call-report';
import { MAX_WINDOW } from './h2-frames';
import { MessageDecoder } from './lean-grpc-connector';
import type { SubscribeResponseMsg } from './lean-proto';
import { literalBlock } from './hpack-literals';
import { checkWindow, RawH2Connection } from './raw-h2-connection';

export interface RawGrpcOptions {
  /**
   * The flow-control window the client gives the server, for the connection and the
   * stream alike, given back each time half of it is read. @default 2^31 - 1, the most
   * HTTP/2 allows: a subscriber never holds the server back. (Tests use a small one.)
   */
  readonly windowBytes?: number;
}

/**
 * `OrderStatusService.Subscribe` over a plain TCP socket, HTTP/2 framed by hand
 * (RawH2Connection), for the unsampled subscribers of a scale run: one connection and one
 * stream per subscriber.
 *
 * Why: at scale every subscriber is a gRPC client in the generator's one process. grpc-js
 * spends its own work on every message (a stream decoder, interceptors, a Readable per
 * call), and below it `node:http2` (the lean client, LeanGrpcConnector) turns every DATA
 * frame into a stream 'data' event through nghttp2's callbacks, so the generator's core
 * filled before the service's. Here per event the client does a frame header,
 * gRPC's prefix and the lean protobuf read.
 *
 * The request is the same header block on every connection (literals, never indexed) and
 * one DATA frame; statuses are read as grpc-js reads them (GrpcCallReport, shared with the
 * lean client). It reads as data arrives: read in batches, like SSE's and socket.io's
 * unsampled sockets, gRPC lengthened the server's tail (the same README).
 *
 * Plaintext h2 with prior knowledge only (the service's own gRPC port); not for a shared
 * channel (each call has its connection) nor TLS, where the lean or grpc-js clients serve.
 */
export class RawGrpcConnector implements Connector {
  readonly transport = 'grpc' as const;
  requests = 0;
  private readonly sockets = new Set<Socket>();
  private readonly host: string;
  private readonly port: number;
  /** The request's header block: the same bytes on every connection (nothing indexed). */
  private readonly requestHeaders: Buffer;
  private readonly window: number;

  constructor(address: string, token: string | undefined, options: RawGrpcOptions = {}) {
    this.window = options.windowBytes ?? MAX_WINDOW;
    checkWindow(this.window);
    const at = address.lastIndexOf(':');
    this.host = address.slice(0, at);
    this.port = Number(address.slice(at + 1));
    this.requestHeaders = literalBlock({
      ...grpcHeaders(token),
      ':scheme': 'http',
      ':authority': address,
    });
  }

  open(orderId: string, afterSeq: number, handlers: StreamHandlers): OpenStream {
    this.requests += 1;
    const method = orderStatusClientCtor().service.Subscribe;
    const full = (b: Buffer): SubscribeResponseMsg =>
      method.responseDeserialize(b) as SubscribeResponseMsg;
    const socket = connect({ host: this.host, port: this.port, noDelay: true });
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    const connection = new RawH2Connection(socket, this.window);
    // Done with the connection, however the call ended: a call without its status still
    // has a stream, which close() cancels.
    const report = new GrpcCallReport(handlers, full, () => connection.close());
    const messages = new MessageDecoder((msg) => report.message(msg));
    let sawHeaders = false;
    connection.request(
      this.requestHeaders,
      framedMessage(method.requestSerialize({ orderId, afterSeq })),
      {
        onHeaders: (fields, endStream) => {
          if (!sawHeaders) {
            sawHeaders = true;
            report.responseHeaders(fields);
          } else {
            report.status(fields);
          }
          // A block that ends the stream without a status: as a stream closed with no
          // status and no error code (the lean client's reset with NO_ERROR), INTERNAL.
          if (endStream) report.fail(GrpcCode.INTERNAL);
        },
        onData: (body, endStream) => {
          if (!messages.push(body)) return report.fail(GrpcCode.INTERNAL);
          // DATA that ends the stream: no trailers, so no status (grpc-js: INTERNAL).
          if (endStream) report.fail(GrpcCode.INTERNAL);
        },
        onClosed: (cause) => {
          // A refused, reset or dropped connection before the status is UNAVAILABLE, as
          // grpc-js says; a connection that broke the protocol, INTERNAL.
          if (cause.kind === 'reset') report.reset(cause.code);
          else if (cause.kind === 'lost') report.lost();
          else report.fail(GrpcCode.INTERNAL);
        },
      },
    );

    return {
      close: () => {
        report.close();
        connection.close();
      },
      // No pause(): a paused socket would stop answering the server's keepalive PINGs too
      // (nghttp2 answers them under a paused stream); the raw client serves scale runs,
      // which never pause a subscriber.
    };
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }
}
