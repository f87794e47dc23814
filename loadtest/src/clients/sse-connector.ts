import { requestHeaders } from './headers';
import type { HttpGetter } from './http-stream';
import { SseParser, type SseMessage } from './sse-parser';
import type {
  Connector,
  HeaderProfile,
  OpenStream,
  StreamHandlers,
  TransportName,
} from './transport';
import { leanEvent } from './lean/lean-event';
import { toWireReset, toWireSkipped } from './wire-types';

/** Routes one SSE message of the service's stream to the handlers; false = stream is over. */
export function dispatchSseMessage(message: SseMessage, handlers: StreamHandlers): boolean {
  switch (message.event) {
    // The order's two kinds share its seq, and the payload domain's one kind has its own;
    // only seq and the publish time are read.
    case 'status':
    case 'tracking':
    case 'payload':
      handlers.onEvent(leanEvent(message.data));
      return true;
    case 'reset':
      handlers.onReset(toWireReset(JSON.parse(message.data)));
      return true;
    case 'skipped':
      handlers.onSkipped(toWireSkipped(JSON.parse(message.data)));
      return true;
    case 'end': {
      const body = JSON.parse(message.data) as { reason?: unknown };
      handlers.onEnd(typeof body.reason === 'string' ? body.reason : 'unknown');
      return false;
    }
    default:
      return true;
  }
}

/** `GET /v1/orders/:id/stream?after=N` over HTTP/1.1 or HTTP/2, parsed as it arrives. */
export class SseConnector implements Connector {
  requests = 0;

  constructor(
    readonly transport: TransportName,
    private readonly http: HttpGetter,
    private readonly profile: HeaderProfile,
    private readonly token: string | undefined,
  ) {}

  open(orderId: string, afterSeq: number, handlers: StreamHandlers): OpenStream {
    this.requests += 1;
    let done = false;
    const finish = (fn: () => void): void => {
      if (done) return;
      done = true;
      stream.abort();
      fn();
    };
    const parser = new SseParser((message) => {
      if (done) return;
      try {
        if (!dispatchSseMessage(message, handlers)) finish(() => undefined);
      } catch {
        finish(() => handlers.onError('malformed_frame'));
      }
    });
    const path = `/v1/orders/${encodeURIComponent(orderId)}/stream?after=${afterSeq}`;
    const stream = this.http.get(
      path,
      requestHeaders(this.profile, this.token, 'text/event-stream'),
      {
        onResponse: (status) => {
          if (status === 200) handlers.onOpen();
          else finish(() => handlers.onError(`http_${status}`));
        },
        onText: (text) => {
          if (!done) parser.feed(text);
        },
        onEnd: () => finish(() => handlers.onError('eof_without_end')),
        onError: (code) => finish(() => handlers.onError(code)),
      },
    );
    return {
      close: () => {
        done = true;
        stream.abort();
      },
      pause: () => stream.pause(),
      resume: () => stream.resume(),
    };
  }

  async close(): Promise<void> {
    this.http.close();
  }
}
