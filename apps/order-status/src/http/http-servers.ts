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
import type { AppConfig } from '../config/app-config';
import type { TlsMaterial } from './dev-certificate';

/**
 * The service's HTTP listeners, both driven by the one Fastify instance:
 * - `https`: TLS with ALPN offering h2 and http/1.1 (allowHTTP1), the production shape;
 * - `http`: plain HTTP/1.1, for curl, local load tests and proxies that terminate TLS.
 * Fastify's request handler is given to both servers, so every route (and socket.io,
 * attached to both) answers on both.
 */
export type H2FastifyAdapter = FastifyAdapter<Http2SecureServer>;

export interface HttpServers {
  readonly adapter: H2FastifyAdapter;
  /** The plain HTTP/1.1 server (not Fastify's own; listened and closed by the bootstrap). */
  readonly http: HttpServer;
  /**
   * Closes every client connection on both listeners: HTTP/2 sessions get GOAWAY (open
   * streams may finish), then anything still open after `graceMs` is destroyed. Without
   * it, `server.close()` waits for idle keep-alive connections and h2 sessions forever.
   */
  closeConnections(graceMs: number): Promise<void>;
  /**
   * Graceful shutdown's first step: both listeners stop accepting connections and HTTP/2
   * sessions get GOAWAY (no new streams; open ones, e.g. SSE, may finish). Idempotent.
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
    serverFactory: (handler: (req: Http2ServerRequest, res: Http2ServerResponse) => void) => {
      // With allowHTTP1, Fastify already handles HTTP/1.1 request objects on the secure
      // server; the plain server hands it the same kind.
      http = createServer(handler as unknown as RequestListener);
      applyHttp1Timeouts(http, config);
      secure = createSecureServer(
        {
          allowHTTP1: true,
          key: tls.key,
          cert: tls.cert,
          // Room for many concurrent SSE / long-poll streams on one browser connection.
          settings: { maxConcurrentStreams: 1000 },
        },
        handler,
      );
      // For HTTP/1.1 clients that negotiated http/1.1 over TLS on the secure port.
      secure.setTimeout(config.http.h2SessionTimeoutMs);
      return secure;
    },
  });
  if (!http || !secure) throw new Error('Fastify did not call serverFactory');
  const plain = http;
  const sockets = trackSockets(secure);
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
      if (plain.listening) plain.close();
      // Fastify closes it again later and tolerates ERR_SERVER_NOT_RUNNING.
      if (secure?.listening) secure.close();
      for (const session of sessions) session.close();
    },
    closeConnections: async (graceMs) => {
      closing = true;
      for (const session of sessions) session.close();
      plain.closeIdleConnections();
      const deadline = Date.now() + graceMs;
      while ((sessions.size > 0 || sockets.size > 0) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
      for (const session of sessions) session.destroy();
      for (const socket of sockets) socket.destroy();
      plain.closeAllConnections();
    },
  };
}

/** TLS sockets that negotiated http/1.1 on the secure port (h2 ones are tracked as sessions). */
function trackSockets(server: Http2SecureServer): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('secureConnection', (socket: TLSSocket) => {
    if (socket.alpnProtocol === 'h2') return;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return sockets;
}

/**
 * Node's defaults, made explicit and configurable: headersTimeout bounds slow-loris
 * headers, requestTimeout bounds receiving a whole request (not the response, so a
 * long-poll hold or an SSE stream is unaffected), keepAliveTimeout outlives common
 * load-balancer idle timeouts (60 s) so the balancer closes first.
 */
function applyHttp1Timeouts(server: HttpServer, config: AppConfig): void {
  server.headersTimeout = config.http.headersTimeoutMs;
  server.requestTimeout = config.http.requestTimeoutMs;
  server.keepAliveTimeout = config.http.keepAliveTimeoutMs;
}
