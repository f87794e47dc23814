import WebSocket from 'ws';
import { leanEvent } from '../clients/lean/lean-event';
import type { HttpGetter, HttpStream } from '../clients/http-stream';
import type { Connector, OpenStream, StreamHandlers } from '../clients/transport';
import { multipartBodies } from './multipart';

const subscriberPath = (orderId: string, route: 'events' | 'ws'): string =>
  `/v1/orders/${encodeURIComponent(orderId)}/${route}`;

const header = (headers: Readonly<Record<string, unknown>>, name: string): string | undefined => {
  const v = headers[name];
  return typeof v === 'string' ? v : undefined;
};

/**
 * Nchan's long-poll protocol: an answer's `Last-Modified` and `Etag` are the cursor, sent
 * back as `If-Modified-Since` / `If-None-Match` on the next poll (nchan.io,
 * "Long-Polling"). With `nchan_longpoll_multipart_response on` (nchan-server.ts) an answer
 * carries every message retained after the cursor as a multipart/mixed body, as the
 * service's answer carries every pending event; without it, one message a poll. The first
 * poll has no cursor and gets the oldest retained messages
 * (`nchan_subscriber_first_message oldest`), which confirms the subscription as the
 * service's first poll does. A 304 or 408 is a hold that timed out.
 */
export class NchanLongPollConnector implements Connector {
  readonly transport = 'longpoll' as const;
  requests = 0;

  constructor(private readonly http: HttpGetter) {}

  open(orderId: string, _afterSeq: number, handlers: StreamHandlers): OpenStream {
    let closed = false;
    let opened = false;
    let current: HttpStream | undefined;
    let cursor: Record<string, string> = {};
    const fail = (code: string): void => {
      if (closed) return;
      closed = true;
      handlers.onError(code);
    };
    const poll = (): void => {
      if (closed) return;
      this.requests += 1;
      let status = 0;
      let body = '';
      let contentType: string | undefined;
      let next = cursor;
      current = this.http.get(subscriberPath(orderId, 'events'), cursor, {
        onResponse: (s, h) => {
          status = s;
          contentType = header(h, 'content-type');
          const lastModified = header(h, 'last-modified');
          const etag = header(h, 'etag');
          if (lastModified !== undefined && etag !== undefined) {
            next = { 'if-modified-since': lastModified, 'if-none-match': etag };
          }
        },
        onText: (t) => (body += t),
        onError: fail,
        onEnd: () => {
          if (closed) return;
          if (status !== 200 && status !== 304 && status !== 408) return fail(`http_${status}`);
          if (!opened) {
            opened = true;
            handlers.onOpen();
          }
          if (status === 200) {
            try {
              for (const message of multipartBodies(contentType, body) ?? [body]) {
                handlers.onEvent(leanEvent(message));
              }
            } catch {
              return fail('malformed_body');
            }
            cursor = next;
          }
          poll();
        },
      });
    };
    poll();
    return {
      close: () => {
        closed = true;
        current?.abort();
      },
    };
  }

  async close(): Promise<void> {
    this.http.close();
  }
}

/** Nchan's WebSocket subscriber: every text message is one published message. */
export class NchanWebSocketConnector implements Connector {
  readonly transport = 'ws' as const;
  requests = 0;
  private readonly sockets = new Set<WebSocket>();

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  open(orderId: string, _afterSeq: number, handlers: StreamHandlers): OpenStream {
    this.requests += 1;
    let done = false;
    const ws = new WebSocket(`ws://${this.host}:${this.port}${subscriberPath(orderId, 'ws')}`);
    this.sockets.add(ws);
    const finish = (code: string): void => {
      if (done) return;
      done = true;
      this.sockets.delete(ws);
      ws.terminate();
      handlers.onError(code);
    };
    ws.on('open', () => handlers.onOpen());
    ws.on('message', (data: Buffer) => {
      if (done) return;
      try {
        handlers.onEvent(leanEvent(data.toString('utf8')));
      } catch {
        finish('malformed_message');
      }
    });
    ws.on('error', (err: Error & { code?: string }) => finish(err.code ?? 'ws_error'));
    ws.on('close', (code: number) => finish(`ws_close_${code}`));
    return {
      close: () => {
        done = true;
        this.sockets.delete(ws);
        ws.terminate();
      },
    };
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    this.sockets.clear();
  }
}
