import { Agent, request, type IncomingMessage } from 'node:http';
import {
  connect,
  constants as h2,
  type ClientHttp2Session,
  type ClientHttp2Stream,
} from 'node:http2';
import { batchedAgent, type ReadBatcher } from './read-batcher';

export const DEFAULT_H2_STREAMS_PER_SESSION = 100;

/** Callbacks of one HTTP GET whose body is read as it arrives. */
export interface HttpStreamHandlers {
  /** `headers`: the response's headers, lower-case names (Nchan's long-poll cursor is in them). */
  onResponse(status: number, headers: Readonly<Record<string, unknown>>): void;
  onText(text: string): void;
  onEnd(): void;
  onError(code: string): void;
}

export interface HttpStream {
  abort(): void;
  pause(): void;
  resume(): void;
}

/** One way of sending GETs: HTTP/1.1 keep-alive, or HTTP/2 with shared sessions. */
export interface HttpGetter {
  get(path: string, headers: Record<string, string>, handlers: HttpStreamHandlers): HttpStream;
  close(): void;
}

/** A stream's one end: the first call of once() runs, later ones do nothing. */
export class Settle {
  done = false;

  once(fn: () => void): void {
    if (this.done) return;
    this.done = true;
    fn();
  }
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : 'ERR_UNKNOWN';
}

/**
 * HTTP/1.1 with keep-alive: a poll reuses its socket for the next poll, and an SSE stream
 * holds one socket. No socket cap, since each subscriber stands for a separate browser.
 * With a `batcher`, every response is read in batches (ReadBatcher) once its headers
 * have arrived.
 */
export class Http1Getter implements HttpGetter {
  private readonly agent: Agent;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly batcher?: ReadBatcher,
  ) {
    this.agent = batcher
      ? batchedAgent()
      : new Agent({ keepAlive: true, maxSockets: Infinity, scheduling: 'lifo' });
  }

  get(path: string, headers: Record<string, string>, handlers: HttpStreamHandlers): HttpStream {
    const settle = new Settle();
    const req = request({ host: this.host, port: this.port, path, headers, agent: this.agent });
    let response: IncomingMessage | undefined;
    req.on('response', (res) => {
      response = res;
      res.setEncoding('utf8');
      handlers.onResponse(res.statusCode ?? 0, res.headers);
      // Paused before its 'data' listener is added, so that listener does not resume it.
      if (this.batcher && !settle.done) this.batcher.add(res);
      res.on('data', (text: string) => {
        if (!settle.done) handlers.onText(text);
      });
      res.on('end', () => settle.once(() => handlers.onEnd()));
      res.on('error', (err) => settle.once(() => handlers.onError(errorCode(err))));
    });
    req.on('error', (err) => settle.once(() => handlers.onError(errorCode(err))));
    req.end();
    return {
      // A finished request's socket is back in the pool (maybe serving another request).
      abort: () => settle.once(() => req.destroy()),
      // Pausing the response, not the socket: the client's parser reads the socket
      // itself, and stops reading it only when the paused response's buffer is full
      // (that is how a stalled reader pushes back on the server).
      pause: () => response?.pause(),
      resume: () => response?.resume(),
    };
  }

  close(): void {
    this.agent.destroy();
  }
}

interface PooledSession {
  readonly session: ClientHttp2Session;
  active: number;
}

/**
 * HTTP/2 over TLS (the service's self-signed development certificate, hence no
 * verification: loopback only). Streams share sessions as a browser shares one per
 * origin; a new session opens when one carries `streamsPerSession` streams (RFC 9113
 * recommends servers allow at least 100 concurrent streams).
 */
export class Http2Getter implements HttpGetter {
  private readonly sessions: PooledSession[] = [];

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly streamsPerSession = DEFAULT_H2_STREAMS_PER_SESSION,
  ) {}

  private session(): PooledSession {
    let pooled = this.sessions.find((s) => s.active < this.streamsPerSession && !s.session.closed);
    if (!pooled) {
      const session = connect(`https://${this.host}:${this.port}`, { rejectUnauthorized: false });
      session.on('error', () => undefined); // surfaced per stream
      pooled = { session, active: 0 };
      const added = pooled;
      session.on('close', () => {
        const i = this.sessions.indexOf(added);
        if (i >= 0) this.sessions.splice(i, 1);
      });
      this.sessions.push(pooled);
    }
    return pooled;
  }

  get(path: string, headers: Record<string, string>, handlers: HttpStreamHandlers): HttpStream {
    const settle = new Settle();
    const pooled = this.session();
    pooled.active += 1;
    let stream: ClientHttp2Stream;
    try {
      stream = pooled.session.request(
        { [h2.HTTP2_HEADER_PATH]: path, ...headers },
        { endStream: true },
      );
    } catch (err) {
      pooled.active -= 1;
      queueMicrotask(() => settle.once(() => handlers.onError(errorCode(err))));
      return { abort: () => undefined, pause: () => undefined, resume: () => undefined };
    }
    stream.setEncoding('utf8');
    stream.on('response', (h) => handlers.onResponse(Number(h[h2.HTTP2_HEADER_STATUS] ?? 0), h));
    stream.on('data', (text: string) => {
      if (!settle.done) handlers.onText(text);
    });
    stream.on('end', () => settle.once(() => handlers.onEnd()));
    stream.on('error', (err) => settle.once(() => handlers.onError(errorCode(err))));
    stream.on('close', () => {
      pooled.active -= 1;
      settle.once(() => handlers.onError(`h2_rst_${stream.rstCode}`));
    });
    return {
      abort: () => settle.once(() => stream.close(h2.NGHTTP2_CANCEL)),
      pause: () => stream.pause(),
      resume: () => stream.resume(),
    };
  }

  close(): void {
    for (const s of this.sessions.splice(0)) s.session.destroy();
  }
}
