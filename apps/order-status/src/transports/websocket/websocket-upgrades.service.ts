import { STATUS_CODES, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { Http2SecureServer } from 'node:http2';
import type { Duplex } from 'node:stream';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { WebSocketServer, type WebSocket } from 'ws';
import { StreamTicketStore } from '@app/auth';
import {
  checkExpectedDomain,
  errorBody,
  ErrorCode,
  EXPECTED_DOMAIN_PARAM,
  GatewayError,
  parseOrderId,
  parseSeq,
  toGatewayError,
  type EncodeOnce,
  type StreamItemOf,
} from '@app/contracts';
import { StreamEventBus } from '@app/event-bus';
import { AuthService } from '../../auth/auth.service';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { ConnectionObserver } from '../../connections/connection-observer';
import { DrainGate } from '../../connections/drain-gate';
import { StreamConnections } from '../../connections/stream-connections.service';
import { startStream } from '../../connections/stream-lifecycle';
import { isOriginAllowed } from '../../http/origin-policy';
import { authenticateUpgrade, selectProtocol } from './websocket-credentials';
import { openFrame, websocketFrames } from './websocket-frames';
import { WebSocketKeepalive } from './websocket-keepalive.service';
import { WebSocketStream } from './websocket-stream';

/** The bus's and the metrics' label for this transport (`ws` is socket.io's). */
export const WEBSOCKET_TRANSPORT = 'websocket';
/** `/v1/orders/:orderId/ws`; the id is percent-decoded, then checked like every route's. */
const ROUTE = /^\/v1\/orders\/([^/]+)\/ws$/;

/** Parses cookies as the HTTP routes do (Fastify's `parseCookie`). */
export type CookieParser = (header: string) => Record<string, string | undefined>;

/**
 * The raw WebSocket transport (RFC 6455, the `ws` package): `GET /v1/orders/:orderId/ws`
 * with `Upgrade: websocket`, on both HTTP listeners (plain HTTP/1.1, and TLS over
 * HTTP/1.1; WebSocket over HTTP/2, RFC 8441, is not offered). It listens to the servers'
 * `upgrade` events beside socket.io's engine and answers only its own path: engine.io
 * answers `/socket.io/`, and destroys any upgrade nobody answered.
 *
 * Before the upgrade: a foreign Origin is refused with 403 (cross-site WebSocket
 * hijacking). After it, every step is the one connection life cycle's (authenticate,
 * authorize the order, take a slot, open the bus subscription), and a refusal is an
 * `error` frame with the typed error and a close code of 4000 + its HTTP status, which a
 * browser can read (it never sees an upgrade's HTTP status).
 */
@Injectable()
export class WebSocketUpgrades {
  private readonly logger = new Logger(WebSocketUpgrades.name);
  private readonly wss: WebSocketServer;
  /** The frames of the bus's domain, shared by every socket. */
  private readonly frames: EncodeOnce<Buffer, StreamItemOf>;
  /** The bus's domain, which a subscriber may name (`?domain=`). */
  private readonly domainName: string;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(StreamConnections) private readonly connections: StreamConnections,
    @Inject(AuthService) private readonly auth: AuthService,
    @Inject(StreamTicketStore) private readonly tickets: StreamTicketStore,
    @Inject(WebSocketKeepalive) private readonly keepalive: WebSocketKeepalive,
    @Inject(DrainGate) private readonly drain: DrainGate,
    @Inject(ConnectionObserver) private readonly observer: ConnectionObserver,
    @Inject(StreamEventBus) bus: StreamEventBus,
  ) {
    this.frames = websocketFrames(bus.domain);
    this.domainName = bus.domain.name;
    this.wss = new WebSocketServer({
      noServer: true,
      // Closed with 1009 past it; the client has nothing to send.
      maxPayload: config.websocket.maxPayloadBytes,
      // Compression costs CPU and memory per socket (zlib contexts), for frames of ~200 B.
      perMessageDeflate: false,
      // The life cycle and the keepalive track the sockets; a second Set would only cost.
      clientTracking: false,
      handleProtocols: selectProtocol,
    });
  }

  /** Serves the route on `servers` (bootstrap passes both HTTP listeners). */
  attach(servers: readonly (HttpServer | Http2SecureServer)[], parseCookie: CookieParser): void {
    const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void =>
      this.upgrade(req, socket, head, parseCookie);
    for (const server of servers) server.on('upgrade', onUpgrade);
  }

  private upgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    parseCookie: CookieParser,
  ): void {
    const url = new URL(req.url ?? '/', 'http://upgrade.invalid');
    const route = ROUTE.exec(url.pathname);
    if (route === null) return;
    socket.on('error', ignoreError);
    if (!isOriginAllowed(req.headers.origin, req.headers.host, this.config.ws.corsOrigins)) {
      const err = new GatewayError(ErrorCode.PermissionDenied, 'origin not allowed');
      refuseUpgrade(socket, 403, JSON.stringify(errorBody(err)));
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.serve(ws, req, route[1], url.searchParams, parseCookie).catch((err: unknown) => {
        this.logger.error(err instanceof Error ? err.stack : String(err));
        ws.terminate();
      });
    });
  }

  private async serve(
    ws: WebSocket,
    req: IncomingMessage,
    rawOrderId: string,
    query: URLSearchParams,
    parseCookie: CookieParser,
  ): Promise<void> {
    const stream = new WebSocketStream(
      ws,
      this.frames,
      this.keepalive,
      this.config.streamEndGraceMs,
    );
    if (this.drain.draining) {
      stream.refuseDraining(this.drain.adviseMs());
      return;
    }
    try {
      const orderId = parseOrderId(decodeOrderId(rawOrderId));
      const afterSeq = parseSeq(query.get('after') ?? undefined, 'after');
      const principal = await authenticateUpgrade(this.auth, this.tickets, WEBSOCKET_TRANSPORT, {
        req,
        orderId,
        ticket: query.get('ticket'),
        cookieName: this.config.auth.cookieName,
        parseCookie,
      });
      if (!stream.open) return;
      // After authentication, as on the HTTP routes and gRPC: a stranger learns no domain.
      checkExpectedDomain(this.domainName, single(query.getAll(EXPECTED_DOMAIN_PARAM)));
      const logged = this.observer.opened(WEBSOCKET_TRANSPORT, principal.subject, { orderId });
      ws.once('close', (code: number) => logged.closed(String(code)));
      await startStream(
        this.connections.busStream({
          transport: WEBSOCKET_TRANSPORT,
          principal,
          orderId,
          afterSeq,
          port: stream,
          sink: (ctx) => stream.attach(ctx, openFrame(orderId, afterSeq)),
        }),
      );
    } catch (err) {
      const gw = toGatewayError(err);
      if (gw.code === ErrorCode.Internal) {
        this.logger.error(err instanceof Error ? err.stack : String(err));
      }
      stream.refuse(gw);
    }
  }
}

const ignoreError = (): void => {};

/** A `%`-decoded path segment; a malformed escape is the client's error. */
function decodeOrderId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new GatewayError(ErrorCode.InvalidArgument, 'malformed order id');
  }
}

/** A query parameter's value: undefined when absent, every value when repeated (refused). */
function single(values: string[]): string | string[] | undefined {
  return values.length > 1 ? values : values[0];
}

/** An HTTP answer instead of the upgrade, then the socket is closed. */
function refuseUpgrade(socket: Duplex, status: number, body: string): void {
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
      'connection: close\r\n' +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n` +
      body,
  );
}
