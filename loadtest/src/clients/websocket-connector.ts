import WebSocket from 'ws';
import { requestHeaders } from './headers';
import type { Connector, HeaderProfile, OpenStream, StreamHandlers } from './transport';
import { toWireEvent, toWireReset, toWireSkipped } from './wire-types';

/** One frame of the service's raw WebSocket route (`{type, data}`). */
interface Frame {
  readonly type?: unknown;
  readonly data?: { readonly reason?: unknown; readonly code?: unknown };
}

/**
 * The service's raw WebSocket transport (`/v1/orders/:id/ws?after=`, RFC 6455), one
 * connection per subscriber with the `ws` package: `open`, then one JSON text frame per
 * item, then `end` or `error` and the close. Pausing pauses the socket (the kernel buffers
 * then the server's `bufferedAmount` fill, as with a stalled consumer). The token goes in
 * the Authorization header, as the other load-test clients send it.
 */
export class WebSocketConnector implements Connector {
  readonly transport = 'websocket' as const;
  requests = 0;
  private readonly sockets = new Set<WebSocket>();

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly profile: HeaderProfile,
    private readonly token: string | undefined,
  ) {}

  open(orderId: string, afterSeq: number, handlers: StreamHandlers): OpenStream {
    this.requests += 1;
    let done = false;
    const url = `ws://${this.host}:${this.port}/v1/orders/${encodeURIComponent(orderId)}/ws?after=${afterSeq}`;
    const ws = new WebSocket(url, {
      headers: {
        ...(this.profile === 'browser' ? requestHeaders('browser', undefined, '*/*') : {}),
        ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
      },
      perMessageDeflate: false,
    });
    this.sockets.add(ws);
    const finish = (fn: () => void): void => {
      if (done) return;
      done = true;
      this.sockets.delete(ws);
      ws.terminate();
      fn();
    };
    ws.on('message', (data: Buffer) => {
      if (done) return;
      try {
        const frame = JSON.parse(data.toString('utf8')) as Frame;
        switch (frame.type) {
          case 'open':
            handlers.onOpen();
            return;
          case 'status':
          case 'tracking':
          case 'payload':
            handlers.onEvent(toWireEvent(frame.data));
            return;
          case 'reset':
            handlers.onReset(toWireReset(frame.data));
            return;
          case 'skipped':
            handlers.onSkipped(toWireSkipped(frame.data));
            return;
          case 'end': {
            const reason = frame.data?.reason;
            finish(() => handlers.onEnd(typeof reason === 'string' ? reason : 'unknown'));
            return;
          }
          case 'error': {
            const code = frame.data?.code;
            finish(() => handlers.onError(`ws_error:${typeof code === 'string' ? code : '?'}`));
            return;
          }
        }
      } catch {
        finish(() => handlers.onError('malformed_message'));
      }
    });
    ws.on('error', (err: Error & { code?: string }) =>
      finish(() => handlers.onError(err.code ?? 'ws_error')),
    );
    ws.on('close', (code: number) => finish(() => handlers.onError(`ws_close_${code}`)));
    return {
      close: () => {
        done = true;
        this.sockets.delete(ws);
        ws.terminate();
      },
      pause: () => ws.pause(),
      resume: () => ws.resume(),
    };
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    this.sockets.clear();
  }
}
