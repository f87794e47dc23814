import { requestHeaders } from './headers';
import type { HttpGetter, HttpStream } from './http-stream';
import type {
  Connector,
  HeaderProfile,
  OpenStream,
  StreamHandlers,
  TransportName,
} from './transport';
import { leanLongPollBody } from './lean/lean-long-poll';

export const DEFAULT_LONG_POLL_WAIT_S = 30;
export const DEFAULT_SHORT_POLL_INTERVAL_MS = 250;

export interface PollOptions {
  /** Server hold time; 0 = short-poll. */
  readonly waitS: number;
  /** Short-poll only: time between the starts of two polls. */
  readonly intervalMs: number;
}

/**
 * `GET /v1/orders/:id/events?after=N&wait=S` in a loop. The first poll asks wait=0 so the
 * subscription is confirmed at once (connect time); later polls hold for `waitS`. A
 * short-poller asks wait=0 every `intervalMs`, as the .NET article's baseline did (seed 000).
 */
export class LongPollConnector implements Connector {
  requests = 0;

  constructor(
    readonly transport: TransportName,
    private readonly http: HttpGetter,
    private readonly profile: HeaderProfile,
    private readonly token: string | undefined,
    private readonly options: PollOptions,
  ) {}

  open(orderId: string, afterSeq: number, handlers: StreamHandlers): OpenStream {
    let closed = false;
    let opened = false;
    let cursor = afterSeq;
    let current: HttpStream | undefined;
    let timer: NodeJS.Timeout | undefined;
    const headers = requestHeaders(this.profile, this.token, 'application/json');
    const base = `/v1/orders/${encodeURIComponent(orderId)}/events`;

    const fail = (code: string): void => {
      if (closed) return;
      closed = true;
      handlers.onError(code);
    };

    const poll = (waitS: number): void => {
      if (closed) return;
      this.requests += 1;
      const startedAt = performance.now();
      let status = 0;
      let body = '';
      current = this.http.get(`${base}?after=${cursor}&wait=${waitS}`, headers, {
        onResponse: (s) => (status = s),
        onText: (t) => (body += t),
        onError: fail,
        onEnd: () => {
          if (closed) return;
          if (status !== 200 && status !== 204) return fail(`http_${status}`);
          if (!opened) {
            opened = true;
            handlers.onOpen();
          }
          if (status === 200) {
            try {
              const page = leanLongPollBody(body);
              // A reset or skipped range, when present, comes before the events.
              if (page.reset) handlers.onReset(page.reset);
              if (page.skipped) handlers.onSkipped(page.skipped);
              for (const e of page.events) handlers.onEvent(e);
              cursor = page.next;
              if (page.completed) {
                closed = true;
                return handlers.onEnd('completed');
              }
            } catch {
              return fail('malformed_body');
            }
          }
          next(startedAt);
        },
      });
    };

    const next = (startedAt: number): void => {
      if (this.options.waitS > 0) return poll(this.options.waitS);
      const delay = Math.max(0, this.options.intervalMs - (performance.now() - startedAt));
      timer = setTimeout(() => poll(0), delay);
    };

    poll(0);
    return {
      close: () => {
        closed = true;
        if (timer) clearTimeout(timer);
        current?.abort();
      },
      pause: () => current?.pause(),
      resume: () => current?.resume(),
    };
  }

  async close(): Promise<void> {
    this.http.close();
  }
}
