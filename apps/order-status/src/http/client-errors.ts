import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody, ErrorCode, GatewayError } from '@app/contracts';

/** An error Node's HTTP/1.1 parser reports on a connection (`clientError`). */
export type ClientError = Error & {
  readonly code?: string;
  /** The chunk being parsed when the parser gave up (a Buffer). */
  readonly rawPacket?: unknown;
  /** How much of `rawPacket` was parsed. */
  readonly bytesParsed?: number;
};

/** Watched connections whose first request line has not ended yet (watchFirstRequestLine). */
const inFirstLine = new WeakSet<Duplex>();

/**
 * Notes when an HTTP/1.1-over-TLS connection's first request line ends, so that a head
 * overflow before then is known to be the URL's, however the line was split over reads
 * (TLS records are at most 16 KiB). Stops reading along once it has seen a line end. Not
 * for plain TCP sockets: Node's HTTP server reads those natively and emits no 'data'.
 */
export function watchFirstRequestLine(socket: Duplex): void {
  inFirstLine.add(socket);
  const onData = (chunk: Buffer) => {
    if (!chunk.includes(LF)) return;
    inFirstLine.delete(socket);
    socket.off('data', onData);
  };
  socket.on('data', onData);
}

/** A request line's start: a method token and a space (RFC 9112 section 3). */
const REQUEST_LINE_START = /^[A-Z]+ /;
const LF = 0x0a;

/**
 * Answers a request Node's HTTP/1.1 parser refused before any route saw it, in the API's
 * error shape (`clientError`, on both listeners; Fastify takes it as `clientErrorHandler`).
 * A head over Node's size limit (`--max-http-header-size`, 16 KiB) is 414 URI Too Long
 * when the request line itself did not fit (RFC 9110 section 15.5.15), else 431 Request
 * Header Fields Too Large (RFC 6585 section 5); Node answers 431 for both. A headers or
 * request timeout is 408, anything else 400. The connection is closed, as Node does.
 */
export function answerClientError(err: ClientError, socket: Duplex): void {
  // A reset connection has nobody to answer (Node's docs for 'clientError').
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, error] = refusalFor(err, socket);
  if (socket.writable) {
    const json = JSON.stringify(errorBody(error));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
    );
  }
  socket.destroy();
}

function refusalFor(err: ClientError, socket: Duplex): [number, GatewayError] {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return urlTooLong(err, socket)
        ? [414, new GatewayError(ErrorCode.InvalidArgument, 'URL too long')]
        : [431, new GatewayError(ErrorCode.InvalidArgument, 'request header fields too large')];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, new GatewayError(ErrorCode.DeadlineExceeded, 'request not received in time')];
    default:
      return [400, new GatewayError(ErrorCode.InvalidArgument, 'malformed request')];
  }
}

/**
 * Whether the parser ran out of room inside the request line: a watched connection's
 * first line never ended, or the chunk being parsed starts a request and holds no line
 * end up to where it stopped. A line split over several reads otherwise (plain TCP with
 * small reads, a later request on a kept-alive connection) reads as a header overflow
 * (431, what Node says): the parser keeps no record of where the line ended.
 */
function urlTooLong(err: ClientError, socket: Duplex): boolean {
  if (inFirstLine.has(socket)) return true;
  const raw = err.rawPacket;
  if (!Buffer.isBuffer(raw)) return false;
  const parsed = raw.subarray(0, err.bytesParsed ?? raw.length);
  return REQUEST_LINE_START.test(parsed.subarray(0, 16).toString('latin1')) && !parsed.includes(LF);
}
