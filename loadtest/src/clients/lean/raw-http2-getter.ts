import { StringDecoder } from 'node:string_decoder';
import { connect } from 'node:tls';
import {
  DEFAULT_H2_STREAMS_PER_SESSION,
  Settle,
  type HttpGetter,
  type HttpStream,
  type HttpStreamHandlers,
} from '../http-stream';
import { literalBlock, pathField } from './hpack-literals';
import { RawH2Connection, type RawH2Close } from './raw-h2-connection';

const NO_STREAM: HttpStream = {
  abort: () => undefined,
  pause: () => undefined,
  resume: () => undefined,
};

/**
 * GETs over HTTP/2 on TLS, framed by hand (RawH2Connection), for the unsampled
 * subscribers of long-poll over HTTP/2 in a scale run. Streams share connections as
 * Http2Getter's share sessions: a new connection opens when one carries
 * `streamsPerSession` streams.
 *
 * Why: a long-poll subscriber sends a request per event, so at 1,000 subscribers the
 * generator is an HTTP/2 client making 10,000 requests a second; through `node:http2`
 * (a ClientHttp2Stream, its headers objects and events per poll) its core neared the mark
 * where a step is read as the generator's limit. Here a poll is one HEADERS frame (the block
 * encoded once per header set, the path's field per poll) and its answer a header block
 * through hpack.js and DATA frames read in one loop per socket read.
 *
 * Loopback only: the service's certificate is its self-signed development one, so it is
 * not verified. No pause(): a scale run never pauses a subscriber, and the connection's
 * other streams and PINGs share the socket.
 */
export class RawHttp2Getter implements HttpGetter {
  private readonly connections: RawH2Connection[] = [];
  /** The header block of every field but `:path`, per header set (a connector has one). */
  private readonly blocks = new WeakMap<Record<string, string>, Buffer>();

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly streamsPerSession = DEFAULT_H2_STREAMS_PER_SESSION,
  ) {}

  get(path: string, headers: Record<string, string>, handlers: HttpStreamHandlers): HttpStream {
    const settle = new Settle();
    const connection = this.connection();
    const text = new StringDecoder('utf8');
    let responded = false;
    const end = (): void => {
      const rest = text.end();
      if (rest.length > 0) handlers.onText(rest);
      handlers.onEnd();
    };
    let id: number;
    try {
      id = connection.request(Buffer.concat([pathField(path), this.block(headers)]), undefined, {
        onHeaders: (fields, endStream) => {
          if (!responded) {
            responded = true;
            handlers.onResponse(Number(fields[':status'] ?? 0), fields);
          }
          if (endStream) settle.once(end);
        },
        onData: (body, endStream) => {
          if (settle.done) return;
          const chunk = text.write(body);
          if (chunk.length > 0) handlers.onText(chunk);
          if (endStream) settle.once(end);
        },
        onClosed: (cause) => settle.once(() => handlers.onError(closeCode(cause))),
      });
    } catch (err) {
      // A path too long for one frame: refused here, as node:http2 refuses what it cannot send.
      const code = err instanceof RangeError ? 'ERR_HTTP2_HEADERS_TOO_LARGE' : 'ERR_UNKNOWN';
      queueMicrotask(() => settle.once(() => handlers.onError(code)));
      return NO_STREAM;
    }
    return {
      abort: () => settle.once(() => connection.cancel(id)),
      pause: () => undefined,
      resume: () => undefined,
    };
  }

  close(): void {
    for (const c of this.connections.splice(0)) c.close();
  }

  private connection(): RawH2Connection {
    const open = this.connections.find((c) => c.usable && c.openStreams < this.streamsPerSession);
    if (open !== undefined) return open;
    const socket = connect({
      host: this.host,
      port: this.port,
      ALPNProtocols: ['h2'],
      rejectUnauthorized: false,
    });
    socket.setNoDelay(true);
    const connection = new RawH2Connection(socket);
    socket.once('close', () => {
      const i = this.connections.indexOf(connection);
      if (i >= 0) this.connections.splice(i, 1);
    });
    this.connections.push(connection);
    return connection;
  }

  private block(headers: Record<string, string>): Buffer {
    let block = this.blocks.get(headers);
    if (block === undefined) {
      block = literalBlock({
        ':method': 'GET',
        ':scheme': 'https',
        ':authority': `${this.host}:${this.port}`,
        ...headers,
      });
      this.blocks.set(headers, block);
    }
    return block;
  }
}

/** The error code a stream that did not end reports, in Http2Getter's vocabulary. */
function closeCode(cause: RawH2Close): string {
  if (cause.kind === 'reset') return `h2_rst_${cause.code}`;
  if (cause.kind === 'lost') return cause.error ?? 'ECONNRESET';
  return 'ERR_HTTP2_ERROR';
}
