import type { WebSocket } from 'ws';
import {
  ErrorCode,
  GatewayError,
  StreamEndReason,
  type EncodeOnce,
  type StreamItemOf,
} from '@app/contracts';
import type { DeliverySink } from '@app/event-bus';
import type { ConnectionPort, StreamContext } from '../../connections/stream-lifecycle';
import {
  CLOSE_CODE_BY_END,
  CLOSE_POLICY_VIOLATION,
  closeCodeOf,
  endFrame,
  errorFrame,
} from './websocket-frames';
import type { KeepaliveEntry, WebSocketKeepalive } from './websocket-keepalive.service';

/**
 * @default 16_384 bytes a socket may hold unsent (ws's `bufferedAmount`: the TCP socket's
 * write buffer) before its sink reports "full" and the bus queues (and conflates) instead:
 * Node's own socket high-water mark. Beyond it the bounded bus queue is the one place a
 * slow reader's backlog lives.
 */
export const WEBSOCKET_HIGH_WATER_BYTES = 16_384;

/** RFC 6455 section 5.2: 2 bytes, 8 of extended length, 4 of mask key at most. */
const MAX_FRAME_HEADER_BYTES = 14;

/** ws sends a Buffer as a binary frame unless told otherwise; the frames are JSON text. */
const TEXT_FRAME = { binary: false } as const;

/** ws.readyState values (the WHATWG WebSocket's). */
const OPEN = 1;
const CLOSED = 3;

/**
 * One raw WebSocket serving one order's stream: the bus's sink, the connection port the
 * life cycle watches, and a keepalive entry. One object (methods, no closures), since an
 * idle stream keeps all three for its whole life.
 *
 * Back-pressure: `write()` reports full once `bufferedAmount` reaches the high-water mark.
 * A send that could take the buffer to the mark (what is buffered + the frame + its header)
 * carries a callback, which ws calls once that frame reached the kernel, and the first
 * callback that finds the buffer below the mark resumes the bus. A frame that made the
 * buffer full always has its own callback, so a resume cannot be missed (or the socket
 * closes, which releases the subscription); the frames well below the mark go without one.
 *
 * Nothing is written after the end frame, the error frame or the peer's leaving.
 */
export class WebSocketStream implements DeliverySink, ConnectionPort, KeepaliveEntry {
  private ctx: StreamContext | undefined;
  private resume: (() => void) | undefined;
  private ponged = true;
  /** The end or error frame went out, or the peer is gone: nothing more is sent. */
  private over = false;

  constructor(
    private readonly ws: WebSocket,
    /** The frames of the bus's domain, shared by every socket (`websocketFrames`). */
    private readonly frames: EncodeOnce<Buffer, StreamItemOf>,
    private readonly keepalives: WebSocketKeepalive,
    /** How long a closing peer gets to answer the close frame before it is cut. */
    private readonly endGraceMs: number,
  ) {
    // ws reports a broken frame, a bad UTF-8 text or a message past maxPayload here, and
    // has sent its close frame (1002, 1007, 1009); a peer that does not answer it is cut.
    ws.on('error', this.onError);
    ws.on('pong', this.onPong);
    // The stream is one-way: a client message is a protocol error, answered and closed.
    ws.on('message', this.onMessage);
    ws.once('close', this.onClose);
    keepalives.add(this);
  }

  /**
   * The life cycle opens the stream (the bus subscription is made next): the `open` frame
   * goes out first, then writes follow until the context is closed.
   */
  attach(ctx: StreamContext, openFrame: string): DeliverySink {
    this.ctx = ctx;
    if (this.open) this.ws.send(openFrame);
    return this;
  }

  /** Still open: the peer has not left and nothing ended the stream. */
  get open(): boolean {
    return !this.over && this.ws.readyState === OPEN;
  }

  write(item: StreamItemOf): boolean {
    if (!this.open || this.ctx?.closed !== false) return false;
    const frame = this.frames.get(item);
    // A send callback costs a closure call per frame and socket; only a frame that may
    // reach the mark needs one, since it alone can leave the sink full.
    if (
      this.ws.bufferedAmount + frame.length + MAX_FRAME_HEADER_BYTES <
      WEBSOCKET_HIGH_WATER_BYTES
    ) {
      this.ws.send(frame, TEXT_FRAME);
      return true;
    }
    this.ws.send(frame, TEXT_FRAME, this.onSent);
    return this.ws.bufferedAmount < WEBSOCKET_HIGH_WATER_BYTES;
  }

  onDrain(resume: () => void): void {
    this.resume = resume;
  }

  end(reason: StreamEndReason, retryAfterMs?: number): void {
    this.close(endFrame(reason, retryAfterMs), CLOSE_CODE_BY_END[reason], reason);
  }

  /** The stream could not open (or the client broke the protocol): the typed error, then close. */
  refuse(err: GatewayError, code = closeCodeOf(err)): void {
    this.close(errorFrame(err), code, err.code);
  }

  /** Refused at shutdown: the reconnect advice, as an open stream gets it. */
  refuseDraining(retryAfterMs: number): void {
    this.end(StreamEndReason.Shutdown, retryAfterMs);
  }

  watchGone(onGone: () => void): void {
    if (this.ws.readyState === CLOSED) onGone();
    else this.ws.once('close', onGone);
  }

  unwatchGone(onGone: () => void): void {
    this.ws.off('close', onGone);
  }

  /** The peer has not taken its last frames (or answered the close) in the grace period. */
  destroy(): void {
    this.ws.terminate();
  }

  keepalive(): void {
    if (!this.ponged) {
      // No pong since the last ping: the peer is dead or stuck; 'close' releases the rest.
      this.ws.terminate();
      return;
    }
    this.ponged = false;
    if (this.ws.readyState === OPEN) this.ws.ping();
  }

  private close(frame: string, code: number, reason: string): void {
    if (!this.open) return;
    this.over = true;
    this.ws.send(frame);
    this.ws.close(code, reason);
    this.closing();
  }

  /**
   * The close frame is out: the peer gets the end grace period to take the last frames and
   * answer it (ws itself would wait 30 s), by the life cycle's deadline once the stream is
   * open, else by a timer of its own (a refusal holds no slot, but still a socket).
   */
  private closing(): void {
    this.over = true;
    if (this.ctx !== undefined) {
      this.ctx.ended();
      return;
    }
    setTimeout(this.terminate, this.endGraceMs).unref();
  }

  private readonly terminate = (): void => this.ws.terminate();

  private readonly onError = (): void => {
    if (this.ws.readyState !== CLOSED) this.closing();
  };

  private readonly onSent = (): void => {
    const resume = this.resume;
    if (resume === undefined || this.ws.bufferedAmount >= WEBSOCKET_HIGH_WATER_BYTES) return;
    this.resume = undefined;
    if (this.open) resume();
  };

  private readonly onPong = (): void => {
    this.ponged = true;
  };

  private readonly onMessage = (): void => {
    this.refuse(
      new GatewayError(ErrorCode.InvalidArgument, 'this stream takes no messages'),
      CLOSE_POLICY_VIOLATION,
    );
  };

  private readonly onClose = (): void => {
    this.over = true;
    this.resume = undefined;
    this.keepalives.delete(this);
  };
}
