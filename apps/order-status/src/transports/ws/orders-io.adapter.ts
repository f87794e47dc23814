import type { Server as HttpServer } from 'node:http';
import type { INestApplicationContext } from '@nestjs/common';
import { IoAdapter } from '@nestjs/platform-socket.io';
import type { MessageMappingProperties } from '@nestjs/websockets';
import type { Observable } from 'rxjs';
import type { Server, ServerOptions, Socket } from 'socket.io';
import type { AppConfig } from '../../config/app-config';
import { originAllowRequest } from '../../http/origin-policy';

/**
 * socket.io on both HTTP listeners: Nest attaches it to the application's server (the
 * TLS h2 + http/1.1 one); this adapter also attaches its engine to the plain HTTP/1.1
 * server, so `/socket.io/` answers on both ports with the same namespaces and sockets.
 * Engine-level options (ping interval/timeout, buffer size, CORS) come from config.
 * Message handlers are bound to each socket with plain listeners (see
 * `bindMessageHandlers`).
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
      // http/origin-policy.ts); CORS headers alone would not stop a websocket.
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

  /**
   * Nest's IoAdapter wires every message handler, per socket, through an RxJS pipeline
   * (fromEvent, mergeMap, takeUntil a shared disconnect$, and their subscribers), which a
   * connected socket keeps for its whole life. One plain listener per message does the
   * same work per message: the
   * handler's result goes through Nest's `transform`; a non-nil result with an `event`
   * is emitted, any other is the ack unless the handler acks itself (`@Ack()`); a
   * failing handler is logged and the socket goes on.
   */
  override bindMessageHandlers(
    socket: Socket,
    handlers: MessageMappingProperties[],
    transform: (data: unknown) => Observable<unknown>,
  ): void {
    for (const handler of handlers) {
      socket.on(handler.message as string, (...args: unknown[]) => {
        // As fromEvent(): one argument as it is, several as an array.
        if (socket.connected)
          this.dispatch(socket, handler, transform, args.length === 1 ? args[0] : args);
      });
    }
  }

  private dispatch(
    socket: Socket,
    handler: MessageMappingProperties,
    transform: (data: unknown) => Observable<unknown>,
    payload: unknown,
  ): void {
    // Nest types the payload `any` and the ack `Function`: what the client sent, and its
    // ack callback when it gave one.
    const { data, ack } = this.mapPayload(payload) as {
      data: unknown;
      ack?: (res: unknown) => void;
    };
    let result$: Observable<unknown>;
    try {
      result$ = transform(handler.callback(data, ack));
    } catch (err) {
      this.logger.error(err);
      return;
    }
    result$.subscribe({
      next: (response) => {
        if (response === null || response === undefined) return;
        const { event, data: eventData } = response as { event?: string; data?: unknown };
        if (event) socket.emit(event, eventData);
        else if (!handler.isAckHandledManually && typeof ack === 'function') ack(response);
      },
      error: (err: unknown) => this.logger.error(err),
    });
  }
}
