import { constants as h2constants, type Http2Stream } from 'node:http2';
import type { FastifyReply } from 'fastify';
import type { ConnectionPort } from './stream-lifecycle';

/** The parts of an HTTP/1.1 ServerResponse or HTTP/2 compat response used here. */
interface RawHttpResponse {
  readonly destroyed: boolean;
  readonly closed?: boolean;
  /** HTTP/2 only. */
  readonly stream?: Http2Stream;
  readonly socket?: { destroyed: boolean; destroy(): void } | null;
  on(event: 'close' | 'error', listener: (...args: unknown[]) => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

/** Write errors on a connection the lifecycle is releasing anyway must not crash the process. */
const ignoreError = () => {};

/**
 * The connection port of an HTTP response (SSE stream, held long-poll), on HTTP/1.1 or
 * HTTP/2.
 *
 * Gone: on HTTP/1.1 the response's 'close' (the socket closed, or the response finished).
 * On HTTP/2 the stream's own 'close': a client's RST_STREAM closes the stream at once,
 * while the compat response only notices at its next write. Either may already have
 * happened by the time the handler runs (the auth guard is async), so the state is
 * checked first.
 *
 * Destroy: HTTP/1.1 destroys the socket (a client that does not read cannot reuse it
 * anyway); HTTP/2 resets just this stream (RST_STREAM CANCEL), other streams of the
 * session are unaffected.
 */
export function httpConnectionPort(reply: FastifyReply): ConnectionPort {
  const res = reply.raw as unknown as RawHttpResponse;
  const stream = res.stream;
  // Kept for the response's whole life: an error is always also a close.
  res.on('error', ignoreError);
  if (stream === undefined) return new Http1Port(res);
  stream.on('error', ignoreError);
  return new Http2Port(stream);
}

// Classes rather than object literals of closures: a held connection keeps its port for
// its whole life, and methods cost it nothing.

class Http1Port implements ConnectionPort {
  constructor(private readonly res: RawHttpResponse) {}

  watchGone(onGone: () => void): void {
    const res = this.res;
    if (res.destroyed || res.closed === true || res.socket?.destroyed !== false) onGone();
    else res.on('close', onGone);
  }

  unwatchGone(onGone: () => void): void {
    this.res.off('close', onGone);
  }

  destroy(): void {
    this.res.socket?.destroy();
  }
}

class Http2Port implements ConnectionPort {
  constructor(private readonly stream: Http2Stream) {}

  watchGone(onGone: () => void): void {
    const stream = this.stream;
    if (stream.destroyed || stream.closed) onGone();
    else stream.once('close', onGone);
  }

  unwatchGone(onGone: () => void): void {
    this.stream.off('close', onGone);
  }

  destroy(): void {
    if (!this.stream.destroyed) this.stream.close(h2constants.NGHTTP2_CANCEL);
  }
}
