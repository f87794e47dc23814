import type { Duplex } from 'node:stream';
import * as hpack from 'hpack.js';
import {
  DEFAULT_WINDOW,
  ErrorCodeH2,
  Flag,
  frame,
  FrameSplitter,
  FrameType,
  goawayFrame,
  MAX_FRAME_SIZE,
  MAX_WINDOW,
  PREFACE,
  rstStreamFrame,
  Setting,
  settingsFrame,
  unpadded,
  windowUpdateFrame,
  type Frame,
} from './h2-frames';

/** HPACK's dynamic table size until a peer says otherwise (SETTINGS_HEADER_TABLE_SIZE). */
export const HEADER_TABLE_SIZE = 4_096;

/** Refuses a flow-control window HTTP/2 cannot give (below its initial 65,535 or above 2^31 - 1). */
export function checkWindow(window: number): void {
  if (!Number.isInteger(window) || window < DEFAULT_WINDOW || window > MAX_WINDOW) {
    throw new RangeError(`a window is ${DEFAULT_WINDOW}..${MAX_WINDOW} bytes`);
  }
}

/** A decoded header block: field names lower-case, as HTTP/2 sends them. */
export type H2Fields = Readonly<Record<string, string>>;

/**
 * How a stream ended other than by END_STREAM: reset by the server (RST_STREAM's code),
 * its connection gone (refused, dropped, or a GOAWAY that never took the stream; the
 * socket's error code when there was one), or its connection broke the protocol (a frame
 * larger than allowed, padding longer than its frame, a header block that does not decode).
 */
export type RawH2Close =
  | { readonly kind: 'reset'; readonly code: number }
  | { readonly kind: 'lost'; readonly error?: string }
  | { readonly kind: 'protocol' };

/** What one stream of a RawH2Connection reports; nothing after END_STREAM or onClosed. */
export interface RawH2StreamHandlers {
  /** A header block of the stream (the response's, then its trailers, if any). */
  onHeaders(fields: H2Fields, endStream: boolean): void;
  /** A DATA frame's content, padding removed: a view valid during the call only. */
  onData(body: Buffer, endStream: boolean): void;
  onClosed(cause: RawH2Close): void;
}

interface OpenH2Stream {
  readonly handlers: RawH2StreamHandlers;
  /** DATA bytes read since this stream's window was last given back. */
  unacked: number;
}

/**
 * The client side of one HTTP/2 connection, framed by hand on a socket (plain TCP or TLS
 * with ALPN h2), for the load test's unsampled subscribers: gRPC's raw client
 * (RawGrpcConnector, one call per connection) and long-poll's (RawHttp2Getter, many polls
 * per connection).
 *
 * Why by hand: every subscriber of a scale run lives in the generator's one process, and
 * `node:http2` turns each frame into stream events through nghttp2's callbacks; here a
 * socket read, whatever it holds, is split into frames in one loop, and only header
 * blocks go through a library (hpack.js, which keeps the connection's dynamic table).
 *
 * What the server sees is an ordinary client: the preface, SETTINGS (server push off,
 * the given window for every stream), requests whose header blocks the caller encodes
 * (literals, never indexed, so nothing of the encoder's table is shared), SETTINGS and
 * PINGs (keepalive) answered, and flow-control window given back as DATA is read. The
 * peer's SETTINGS are acknowledged but not applied: requests carry at most one small
 * DATA frame, and callers stay under the server's stream limit themselves.
 */
export class RawH2Connection {
  private readonly streams = new Map<number, OpenH2Stream>();
  private readonly frames = new FrameSplitter((f) => this.frame(f));
  private readonly hpack = hpack.decompressor.create({ table: { size: HEADER_TABLE_SIZE } });
  private hpackError = false;
  /** A header block waiting for its CONTINUATION frames: its stream, parts, END_STREAM. */
  private block: { streamId: number; parts: Buffer[]; endStream: boolean } | undefined;
  /** DATA bytes read on the connection since its window was last given back. */
  private unacked = 0;
  private nextId = 1;
  private socketError: string | undefined;
  /** No new streams: the server sent GOAWAY, the connection closed or broke, or close() was called. */
  private draining = false;

  constructor(
    private readonly socket: Duplex,
    /** The flow-control window given to the server, per stream and for the connection. */
    private readonly window: number = MAX_WINDOW,
  ) {
    checkWindow(window);
    this.hpack.on('error', () => (this.hpackError = true));
    socket.write(
      Buffer.concat([
        PREFACE,
        settingsFrame([
          [Setting.EnablePush, 0],
          [Setting.InitialWindowSize, window],
        ]),
        // The connection's window starts at 65,535 whatever the settings say.
        ...(window > DEFAULT_WINDOW ? [windowUpdateFrame(0, window - DEFAULT_WINDOW)] : []),
      ]),
    );
    socket.on('data', (chunk: Buffer) => {
      if (!this.frames.push(chunk)) this.broken();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => (this.socketError ??= err.code));
    socket.once('close', () => {
      this.draining = true;
      this.endAll({ kind: 'lost', error: this.socketError });
    });
  }

  /** Streams open now (sent, not yet ended). */
  get openStreams(): number {
    return this.streams.size;
  }

  /** Whether a new stream may start here. */
  get usable(): boolean {
    return !this.draining && this.nextId <= MAX_WINDOW;
  }

  /**
   * Starts a stream: its header block (encoded by the caller, at most one frame) and, if
   * given, a body sent whole in one DATA frame. Returns the stream's id.
   */
  request(headerBlock: Buffer, body: Buffer | undefined, handlers: RawH2StreamHandlers): number {
    if (!this.usable) throw new Error('the connection takes no new streams');
    if (headerBlock.length > MAX_FRAME_SIZE || (body?.length ?? 0) > MAX_FRAME_SIZE) {
      throw new RangeError('a request is one HEADERS frame and at most one DATA frame');
    }
    const id = this.nextId;
    this.nextId += 2;
    this.streams.set(id, { handlers, unacked: 0 });
    const headers = frame(
      FrameType.Headers,
      Flag.EndHeaders | (body === undefined ? Flag.EndStream : 0),
      id,
      headerBlock,
    );
    this.socket.write(
      body === undefined
        ? headers
        : Buffer.concat([headers, frame(FrameType.Data, Flag.EndStream, id, body)]),
    );
    return id;
  }

  /** The client is done with a stream: reset it (CANCEL) unless it has already ended. */
  cancel(id: number): void {
    if (!this.streams.delete(id) || this.socket.destroyed) return;
    this.socket.write(rstStreamFrame(id, ErrorCodeH2.Cancel));
  }

  /** Hangs up: open streams are cancelled, unreported, then GOAWAY and the socket's end. */
  close(): void {
    this.draining = true;
    if (this.socket.destroyed) return;
    const resets = [...this.streams.keys()].map((id) => rstStreamFrame(id, ErrorCodeH2.Cancel));
    this.streams.clear();
    this.socket.end(Buffer.concat([...resets, goawayFrame(0, ErrorCodeH2.NoError)]));
  }

  private frame(f: Frame): void {
    // The rest of a read after a connection error.
    if (this.socket.destroyed) return;
    switch (f.type) {
      case FrameType.Data:
        return this.data(f);
      case FrameType.Headers:
      case FrameType.Continuation:
        return this.headers(f);
      case FrameType.RstStream: {
        const stream = this.streams.get(f.streamId);
        if (stream === undefined || f.payload.length !== 4) return;
        this.streams.delete(f.streamId);
        return stream.handlers.onClosed({ kind: 'reset', code: f.payload.readUInt32BE(0) });
      }
      case FrameType.Settings:
        if (!(f.flags & Flag.Ack)) this.socket.write(frame(FrameType.Settings, Flag.Ack, 0));
        return;
      case FrameType.Ping:
        if (!(f.flags & Flag.Ack)) this.socket.write(frame(FrameType.Ping, Flag.Ack, 0, f.payload));
        return;
      case FrameType.Goaway:
        return this.goaway(f);
      default:
        // WINDOW_UPDATE (a request's DATA is sent whole at once), PRIORITY, unknown types.
        return;
    }
  }

  private data(f: Frame): void {
    // DATA counts against the connection's window whichever stream it is for (RFC 9113 §6.9).
    // Window is given back once half of it is read (rarely: nothing is allocated per frame).
    this.unacked += f.payload.length;
    if (this.unacked >= this.window / 2) {
      this.socket.write(windowUpdateFrame(0, this.unacked));
      this.unacked = 0;
    }
    const stream = this.streams.get(f.streamId);
    const end = (f.flags & Flag.EndStream) !== 0;
    if (stream !== undefined && !end) {
      stream.unacked += f.payload.length;
      if (stream.unacked >= this.window / 2) {
        this.socket.write(windowUpdateFrame(f.streamId, stream.unacked));
        stream.unacked = 0;
      }
    }
    const body = unpadded(f);
    if (body === undefined) return this.broken();
    if (stream === undefined) return;
    if (end) this.streams.delete(f.streamId);
    stream.handlers.onData(body, end);
  }

  private headers(f: Frame): void {
    const part = f.type === FrameType.Headers ? unpadded(f) : f.payload;
    if (part === undefined) return this.broken();
    if (f.type === FrameType.Headers) {
      this.block = { streamId: f.streamId, parts: [], endStream: (f.flags & Flag.EndStream) !== 0 };
    }
    // A CONTINUATION with no block open, or for another stream: a connection error.
    if (this.block === undefined || this.block.streamId !== f.streamId) return this.broken();
    this.block.parts.push(Buffer.from(part));
    if (!(f.flags & Flag.EndHeaders)) return;
    const { parts, endStream } = this.block;
    this.block = undefined;
    // Every block is decoded, whichever stream it is for: HPACK's table is the connection's.
    const fields = this.decode(parts.length === 1 ? parts[0] : Buffer.concat(parts));
    if (fields === undefined) return this.broken();
    const stream = this.streams.get(f.streamId);
    if (stream === undefined) return;
    if (endStream) this.streams.delete(f.streamId);
    stream.handlers.onHeaders(fields, endStream);
  }

  private goaway(f: Frame): void {
    if (f.payload.length < 8) return this.broken();
    this.draining = true;
    // Streams above the last one the server took were never seen: lost. The others run
    // to their end, which the server sends before it closes.
    const last = f.payload.readUInt32BE(0) & MAX_WINDOW;
    for (const [id, stream] of this.streams) {
      if (id <= last) continue;
      this.streams.delete(id);
      stream.handlers.onClosed({ kind: 'lost' });
    }
  }

  private decode(block: Buffer): H2Fields | undefined {
    this.hpack.write(block);
    this.hpack.execute();
    const out: Record<string, string> = {};
    for (let field = this.hpack.read(); field !== null; field = this.hpack.read()) {
      out[field.name] = field.value;
    }
    return this.hpackError ? undefined : out;
  }

  /** A connection error: every open stream ends as broken, and the socket is dropped. */
  private broken(): void {
    this.draining = true;
    this.endAll({ kind: 'protocol' });
    this.socket.destroy();
  }

  private endAll(cause: RawH2Close): void {
    const open = [...this.streams.values()];
    this.streams.clear();
    for (const s of open) s.handlers.onClosed(cause);
  }
}
