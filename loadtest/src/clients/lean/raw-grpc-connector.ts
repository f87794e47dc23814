import { connect, type Socket } from 'node:net';
import { status as GrpcCode } from '@grpc/grpc-js';
import * as hpack from 'hpack.js';
import { orderStatusClientCtor } from '../grpc-connector';
import { framedMessage, grpcHeaders } from '../grpc-frame';
import type { Connector, OpenStream, StreamHandlers } from '../transport';
import { GrpcCallReport, type GrpcHeaders } from './grpc-call-report';
import {
  DEFAULT_WINDOW,
  ErrorCodeH2,
  Flag,
  frame,
  FrameSplitter,
  FrameType,
  goawayFrame,
  MAX_WINDOW,
  PREFACE,
  rstStreamFrame,
  Setting,
  settingsFrame,
  unpadded,
  windowUpdateFrame,
  type Frame,
} from './h2-frames';
import { MessageDecoder } from './lean-grpc-connector';
import type { SubscribeResponseMsg } from './lean-proto';

/** The one stream of a connection: a client's first stream id (RFC 9113 §5.1.1). */
const STREAM = 1;
/** HPACK's dynamic table size until a peer says otherwise (SETTINGS_HEADER_TABLE_SIZE). */
const HEADER_TABLE_SIZE = 4_096;

export interface RawGrpcOptions {
  /**
   * The flow-control window the client gives the server, for the connection and the
   * stream alike, given back each time half of it is read. @default 2^31 - 1, the most
   * HTTP/2 allows: a subscriber never holds the server back. (Tests use a small one.)
   */
  readonly windowBytes?: number;
}

/**
 * `OrderStatusService.Subscribe` over a plain TCP socket, HTTP/2 framed by hand, for
 * the unsampled subscribers of a scale run: one connection and one stream per subscriber.
 *
 * Why: at scale every subscriber is a gRPC client in the generator's one process. grpc-js
 * spends its own work on every message (a stream decoder, interceptors, a Readable per
 * call), and below it `node:http2` (the lean client, LeanGrpcConnector) turns every DATA
 * frame into a stream 'data' event through nghttp2's callbacks: on a slow 2-vCPU host the
 * generator's core filled first at 3,000 subscribers with the service's at 83 %
 * (loadtest/results/scale/README.md). Here a socket read, whatever it holds, is split into
 * frames in one loop; per event the client does a frame header, gRPC's prefix and the
 * lean protobuf read.
 *
 * What the server sees is a gRPC client: the connection preface, SETTINGS (server push
 * off, a large stream window), the request's HEADERS (encoded by hpack.js, each field a
 * literal never indexed, so one encoding serves every connection) and its DATA. It
 * answers the server's SETTINGS and PINGs (keepalive) and gives back flow-control window
 * as it reads. Header blocks (the response's and the trailers', two per call) go through
 * hpack.js's decoder, which keeps the connection's dynamic table; only DATA is read by
 * hand. Statuses are read as grpc-js reads them (GrpcCallReport, shared with the lean
 * client). It reads as data arrives: read in batches, like SSE's and socket.io's
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
    if (
      !Number.isInteger(this.window) ||
      this.window < DEFAULT_WINDOW ||
      this.window > MAX_WINDOW
    ) {
      throw new RangeError(`a window is ${DEFAULT_WINDOW}..${MAX_WINDOW} bytes`);
    }
    const at = address.lastIndexOf(':');
    this.host = address.slice(0, at);
    this.port = Number(address.slice(at + 1));
    const fields = { ...grpcHeaders(token), ':scheme': 'http', ':authority': address };
    const comp = hpack.compressor.create({ table: { size: HEADER_TABLE_SIZE } });
    // Pseudo-header fields first (RFC 9113 §8.3).
    const ordered = Object.entries(fields).sort(
      ([a], [b]) => Number(b[0] === ':') - Number(a[0] === ':'),
    );
    comp.write(ordered.map(([name, value]) => ({ name, value, neverIndex: true })));
    this.requestHeaders = comp.read() ?? Buffer.alloc(0);
  }

  open(orderId: string, afterSeq: number, handlers: StreamHandlers): OpenStream {
    this.requests += 1;
    const method = orderStatusClientCtor().service.Subscribe;
    const full = (b: Buffer): SubscribeResponseMsg =>
      method.responseDeserialize(b) as SubscribeResponseMsg;
    const socket = connect({ host: this.host, port: this.port, noDelay: true });
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));

    // Done with the connection: a call without its status still has a stream to cancel.
    const hangUp = (cancel: boolean): void => {
      if (socket.destroyed) return;
      socket.end(
        Buffer.concat([
          ...(cancel ? [rstStreamFrame(STREAM, ErrorCodeH2.Cancel)] : []),
          goawayFrame(0, ErrorCodeH2.NoError),
        ]),
      );
    };
    const report = new GrpcCallReport(handlers, full, hangUp);
    const call = new RawCall(socket, report, this.window);
    socket.write(
      Buffer.concat([
        PREFACE,
        settingsFrame([
          [Setting.EnablePush, 0],
          [Setting.InitialWindowSize, this.window],
        ]),
        // The connection's window starts at 65,535 whatever the settings say.
        ...(this.window > DEFAULT_WINDOW
          ? [windowUpdateFrame(0, this.window - DEFAULT_WINDOW)]
          : []),
        frame(FrameType.Headers, Flag.EndHeaders, STREAM, this.requestHeaders),
        frame(
          FrameType.Data,
          Flag.EndStream,
          STREAM,
          framedMessage(method.requestSerialize({ orderId, afterSeq })),
        ),
      ]),
    );
    socket.on('data', (chunk: Buffer) => call.read(chunk));
    // A refused, reset or dropped connection ends in 'close'; the call, unless it already
    // has its status (or the client closed it), is then UNAVAILABLE, as grpc-js says.
    socket.on('error', () => undefined);
    socket.once('close', () => report.lost());

    return {
      close: () => {
        report.close();
        hangUp(true);
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

/** One call's connection, as it is read: frames, the header blocks, the messages. */
class RawCall {
  private readonly frames = new FrameSplitter((f) => this.frame(f));
  private readonly messages: MessageDecoder;
  private readonly hpack = hpack.decompressor.create({ table: { size: HEADER_TABLE_SIZE } });
  private hpackError = false;
  /** A header block waiting for its CONTINUATION frames, and whether it ends the stream. */
  private block: Buffer[] | undefined;
  private blockEndsStream = false;
  private sawHeaders = false;
  /** DATA bytes read since the window was last given back (connection and stream alike). */
  private unacked = 0;

  constructor(
    private readonly socket: Socket,
    private readonly report: GrpcCallReport,
    private readonly window: number,
  ) {
    this.messages = new MessageDecoder((msg) => report.message(msg));
    this.hpack.on('error', () => (this.hpackError = true));
  }

  read(chunk: Buffer): void {
    if (this.report.finished) return;
    if (!this.frames.push(chunk)) this.report.fail(GrpcCode.INTERNAL);
  }

  private frame(f: Frame): void {
    if (this.report.finished) return;
    switch (f.type) {
      case FrameType.Data:
        return this.data(f);
      case FrameType.Headers:
      case FrameType.Continuation:
        return this.headers(f);
      case FrameType.RstStream:
        if (f.streamId === STREAM && f.payload.length === 4) {
          this.report.reset(f.payload.readUInt32BE(0));
        }
        return;
      case FrameType.Settings:
        if (!(f.flags & Flag.Ack)) this.socket.write(frame(FrameType.Settings, Flag.Ack, 0));
        return;
      case FrameType.Ping:
        if (!(f.flags & Flag.Ack)) this.socket.write(frame(FrameType.Ping, Flag.Ack, 0, f.payload));
        return;
      case FrameType.Goaway:
        // The server will not take the stream: it never saw it. Otherwise the stream
        // runs to its status, which the server sends before it closes.
        if (f.payload.length >= 8 && (f.payload.readUInt32BE(0) & MAX_WINDOW) < STREAM) {
          this.report.lost();
        }
        return;
      default:
        // WINDOW_UPDATE (the request is sent whole at once), PRIORITY, unknown types: ignored.
        return;
    }
  }

  private data(f: Frame): void {
    if (f.streamId !== STREAM) return;
    const body = unpadded(f);
    if (body === undefined) return this.report.fail(GrpcCode.INTERNAL);
    this.unacked += f.payload.length;
    if (this.unacked >= this.window / 2) {
      this.socket.write(
        Buffer.concat([
          windowUpdateFrame(0, this.unacked),
          windowUpdateFrame(STREAM, this.unacked),
        ]),
      );
      this.unacked = 0;
    }
    if (!this.messages.push(body)) return this.report.fail(GrpcCode.INTERNAL);
    // DATA that ends the stream: no trailers, so no status (grpc-js: INTERNAL).
    if (f.flags & Flag.EndStream) this.report.fail(GrpcCode.INTERNAL);
  }

  private headers(f: Frame): void {
    const part = f.type === FrameType.Headers ? unpadded(f) : f.payload;
    if (part === undefined) return this.report.fail(GrpcCode.INTERNAL);
    if (f.type === FrameType.Headers) {
      this.block = [];
      this.blockEndsStream = (f.flags & Flag.EndStream) !== 0;
    }
    if (this.block === undefined) return this.report.fail(GrpcCode.INTERNAL);
    this.block.push(Buffer.from(part));
    if (!(f.flags & Flag.EndHeaders)) return;
    const block = Buffer.concat(this.block);
    this.block = undefined;
    // Every block is decoded, whichever stream it is for: HPACK's table is the connection's.
    const h = this.decode(block);
    if (h === undefined) return this.report.fail(GrpcCode.INTERNAL);
    if (f.streamId !== STREAM) return;
    if (!this.sawHeaders) {
      this.sawHeaders = true;
      this.report.responseHeaders(h);
    } else {
      this.report.status(h);
    }
    // A block that ends the stream without a status: as a stream closed with no status
    // and no error code (the lean client's reset with NO_ERROR), INTERNAL.
    if (this.blockEndsStream) this.report.fail(GrpcCode.INTERNAL);
  }

  private decode(block: Buffer): GrpcHeaders | undefined {
    this.hpack.write(block);
    this.hpack.execute();
    const out: Record<string, string> = {};
    for (let field = this.hpack.read(); field !== null; field = this.hpack.read()) {
      out[field.name] = field.value;
    }
    return this.hpackError ? undefined : out;
  }
}
