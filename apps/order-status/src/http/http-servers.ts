import { createServer, type RequestListener, type Server as HttpServer } from 'node:http';
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
} from 'node:http2';
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
}

export function createHttpServers(config: AppConfig, tls: TlsMaterial): HttpServers {
  let http: HttpServer | undefined;
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
      const secure: Http2SecureServer = createSecureServer(
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
  if (!http) throw new Error('Fastify did not call serverFactory');
  return { adapter, http };
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
