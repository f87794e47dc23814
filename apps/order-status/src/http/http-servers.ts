import { createServer, type RequestListener, type Server as HttpServer } from 'node:http';
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
} from 'node:http2';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyError } from 'fastify';
import { errorBody, ErrorCode, GatewayError } from '@app/contracts';
import type { AppConfig } from '../config/app-config';
import { answerClientError, watchFirstRequestLine } from './client-errors';
import type { TlsMaterial } from './dev-certificate';

/**
 * The service's HTTP listeners, both driven by the one Fastify instance:
 * - `https`: TLS with ALPN offering h2 and http/1.1 (allowHTTP1), the production shape;
 * - `http`: plain HTTP/1.1, for curl, local load tests and proxies that terminate TLS.
 * Fastify's request handler is given to both servers, so every route (and socket.io,
 * attached to both) answers on both.
 */
export type H2FastifyAdapter = FastifyAdapter<Http2SecureServer>;

/** @default 1_024 characters per path parameter (Fastify's own default is 100) */
export const MAX_PARAM_LENGTH = 1_024;

export interface HttpServers {
  readonly adapter: H2FastifyAdapter;
  /** The plain HTTP/1.1 server (not Fastify's own; listened and closed by the bootstrap). */
  readonly http: HttpServer;
  /**
   * The end of the drain: both listeners close, HTTP/2 sessions get GOAWAY (open streams
   * may finish), then every TCP connection still open after `graceMs` is destroyed, on
   * both ports and whatever runs on it (HTTP/1.1, HTTP/2 sessions, upgraded engine.io
   * websockets). Without it, `server.close()` waits for idle keep-alive connections, and
   * a peer that stopped reading keeps a session's GOAWAY or a websocket's close frame
   * unsent, and its socket open, for as long as TCP lets it. Resolves with the number
   * of connections destroyed.
   */
  closeConnections(graceMs: number): Promise<number>;
  /**
   * Graceful shutdown's first step: HTTP/2 sessions get GOAWAY (no new streams; open ones,
   * e.g. SSE, may finish), and so does any session opened from now on. The listeners stay
   * open until `closeConnections`, so probes get `/health/ready` 503 (and API requests
   * the drain gate's reconnect advice) rather than a refused connection. Idempotent.
   */
  stopAccepting(): void;
}

export function createHttpServers(config: AppConfig, tls: TlsMaterial): HttpServers {
  let http: HttpServer | undefined;
  let secure: Http2SecureServer | undefined;
  const adapter: H2FastifyAdapter = new FastifyAdapter<Http2SecureServer>({
    http2: true,
    https: { allowHTTP1: true, key: tls.key, cert: tls.cert },
    bodyLimit: config.http.bodyLimitBytes,
    http2SessionTimeout: config.http.h2SessionTimeoutMs,
    // Long-poll holds and SSE streams are long on purpose; the per-route code bounds them.
    connectionTimeout: 0,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    requestTimeout: config.http.requestTimeoutMs,
    return503OnClosing: true,
    // Room for any order id to reach the route, where the order-id gate (orders/) answers
    // a typed 400; find-my-way's limit guards regex parameters, and these routes have none.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: answerFrameworkError,
    // Requests the parser refuses (an over-long URL or header section, a timeout).
    clientErrorHandler: answerClientError,
    serverFactory: (handler: (req: Http2ServerRequest, res: Http2ServerResponse) => void) => {
      // With allowHTTP1, Fastify already handles HTTP/1.1 request objects on the secure
      // server; the plain server hands it the same kind.
      http = createServer(handler as unknown as RequestListener);
      http.on('clientError', answerClientError);
      applyHttp1Timeouts(http, config);
      secure = createSecureServer(
        {
          allowHTTP1: true,
          key: tls.key,
          cert: tls.cert,
          // A socket that never completes its handshake (no ClientHello) is closed then.
          handshakeTimeout: config.http.tlsHandshakeTimeoutMs,
          // Small writes go out at once (TCP_NODELAY), as Node's HTTP/1.1 server does by
          // default and its HTTP/2 secure server does not: otherwise a poll answer or an
          // SSE event written while an earlier one is unacknowledged may wait for the
          // client's delayed ACK (test/hardening/tcp-nodelay).
          noDelay: true,
          // Room for many concurrent SSE / long-poll streams on one browser connection.
          settings: { maxConcurrentStreams: 1000 },
        },
        handler,
      );
      // HTTP/1.1 over TLS (allowHTTP1) is served by Node's HTTP/1.1 connection code, which
      // reads the same timeout fields from this server: without them it keeps Node's
      // defaults (60 s for headers), whatever the configuration says.
      applyHttp1Timeouts(secure, config);
      // Idle sockets on the secure port (h1 keep-alive between requests).
      secure.setTimeout(config.http.h2SessionTimeoutMs);
      return secure;
    },
  });
  if (!http || !secure) throw new Error('Fastify did not call serverFactory');
  const plain = http;
  const secureServer = secure;
  const sockets = trackConnections([plain, secureServer]);
  // HTTP/1.1 over TLS: the first request line is watched, so an over-long URL is a 414.
  secure.on('secureConnection', (socket: TLSSocket) => {
    if (socket.alpnProtocol !== 'h2') watchFirstRequestLine(socket);
  });
  const sessions = new Set<ServerHttp2Session>();
  let closing = false;
  secure.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    // A session that completes its handshake while we close gets GOAWAY at once.
    if (closing) session.close();
  });
  return {
    adapter,
    http: plain,
    stopAccepting: () => {
      closing = true;
      for (const session of sessions) session.close();
    },
    closeConnections: async (graceMs) => {
      closing = true;
      if (plain.listening) plain.close();
      // Fastify closes it again later and tolerates ERR_SERVER_NOT_RUNNING.
      if (secureServer.listening) secureServer.close();
      for (const session of sessions) session.close();
      plain.closeIdleConnections();
      const deadline = Date.now() + graceMs;
      while (sockets.size > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, CLOSE_POLL_MS));
      }
      for (const session of sessions) session.destroy();
      // A destroyed session (or an ended websocket) still waits to flush what its peer
      // never reads before it lets go of the socket: only the TCP socket's own destroy
      // frees it at once.
      const destroyed = sockets.size;
      for (const socket of sockets) socket.destroy();
      return destroyed;
    },
  };
}

/** How often `closeConnections` looks whether every connection has gone (a bounded wait). */
const CLOSE_POLL_MS = 20;

/**
 * Every TCP connection the servers accept, as the raw socket under TLS, HTTP/2 and
 * WebSocket upgrades ('connection' comes before any of them), until it closes.
 */
function trackConnections(servers: readonly (HttpServer | Http2SecureServer)[]): Set<Socket> {
  const sockets = new Set<Socket>();
  for (const server of servers) {
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
  }
  return sockets;
}

/** The HTTP/1.1 timeout fields Node's connection code reads from a server (http or http2 with allowHTTP1). */
interface Http1Timeouts {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionsCheckingInterval: number;
}

/** @default 1_000 ms: the longest a header or request deadline can be overrun by */
export const MAX_CONNECTIONS_CHECK_INTERVAL_MS = 1_000;

/**
 * Node's defaults, made explicit and configurable: headersTimeout bounds slow-loris
 * headers, requestTimeout bounds receiving a whole request (not the response, so a
 * long-poll hold or an SSE stream is unaffected), keepAliveTimeout outlives common
 * load-balancer idle timeouts (60 s) so the balancer closes first. Node enforces the
 * first two on a timer (`connectionsCheckingInterval`, 30 s by default, which would let
 * a 10 s header deadline run to 40 s); it is set before `listen()`, which starts it.
 */
function applyHttp1Timeouts(server: HttpServer | Http2SecureServer, config: AppConfig): void {
  const target = server as unknown as Http1Timeouts;
  target.headersTimeout = config.http.headersTimeoutMs;
  target.requestTimeout = config.http.requestTimeoutMs;
  target.keepAliveTimeout = config.http.keepAliveTimeoutMs;
  target.connectionsCheckingInterval = Math.min(
    MAX_CONNECTIONS_CHECK_INTERVAL_MS,
    Math.floor(config.http.headersTimeoutMs / 2),
  );
}

/** The raw response of a Fastify reply, whichever server (http or http2) it came from. */
interface RawReply {
  readonly raw: {
    writeHead(status: number, headers: Record<string, string | number>): unknown;
    end(body: string): unknown;
  };
}

/**
 * Fastify's own answers to unroutable URLs (bad percent-encoding, a parameter past
 * maxParamLength) echo the path and have their own shape; ours do neither.
 */
function answerFrameworkError(err: FastifyError, _req: unknown, reply: RawReply): void {
  const tooLong = err.code === 'FST_ERR_MAX_PARAM_LENGTH';
  const message = tooLong ? 'URL too long' : 'malformed URL';
  const json = JSON.stringify(errorBody(new GatewayError(ErrorCode.InvalidArgument, message)));
  reply.raw.writeHead(tooLong ? 414 : 400, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
  });
  reply.raw.end(json);
}
