import type { Server as HttpServer } from 'node:http';
import type { INestApplicationContext } from '@nestjs/common';
import { IoAdapter } from '@nestjs/platform-socket.io';
import type { Server, ServerOptions } from 'socket.io';
import type { AppConfig } from '../../config/app-config';
import { originAllowRequest } from './origin-policy';

/**
 * socket.io on both HTTP listeners: Nest attaches it to the application's server (the
 * TLS h2 + http/1.1 one); this adapter also attaches its engine to the plain HTTP/1.1
 * server, so `/socket.io/` answers on both ports with the same namespaces and sockets.
 * Engine-level options (ping interval/timeout, buffer size, CORS) come from config.
 */
export class OrdersIoAdapter extends IoAdapter {
  constructor(
    app: INestApplicationContext,
    private readonly extraServers: readonly HttpServer[],
    private readonly config: AppConfig,
  ) {
    super(app);
  }

  override createIOServer(port: number, options?: ServerOptions): Server {
    const ws = this.config.ws;
    const engine: Partial<ServerOptions> = {
      ...options,
      pingInterval: ws.pingIntervalMs,
      pingTimeout: ws.pingTimeoutMs,
      // socket.io's default is 1 MB; subscribe messages are tiny.
      maxHttpBufferSize: ws.maxHttpBufferBytes,
      cors: { origin: [...ws.corsOrigins], credentials: true },
      // Refuses foreign Origins on both transports, at the engine handshake (see
      // origin-policy.ts); CORS headers alone would not stop a websocket.
      allowRequest: originAllowRequest(ws.corsOrigins),
    };
    // Nest 12 types the options as the full ServerOptions, but hands over the gateway's
    // partial ones; socket.io fills in every option not given (path included).
    const server = super.createIOServer(port, engine as ServerOptions);
    // Same engine, so the same sockets and namespaces; the path must be given again.
    for (const extra of this.extraServers) {
      server.engine.attach(extra, { ...server._opts, path: server.path() });
    }
    return server;
  }
}
