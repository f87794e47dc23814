import { ErrorCode } from '@app/contracts/gateway-error';
import { StreamEndReason } from '@app/contracts/stream-envelope';
import { httpError, toWatchError, WatchError } from '../watch-error';
import {
  bearer,
  domainQuery,
  orderUrl,
  type ConnectionEnd,
  type ConnectRequest,
} from './connector';
import { itemWireNames, wireItem, type WireDomain } from './wire-items';

/** The part of the browser's EventSource used here (the Node typings have none). */
interface BrowserEventSource {
  readonly readyState: number;
  onopen: (() => void) | null;
  onerror: (() => void) | null;
  addEventListener(type: string, listener: (m: { readonly data: string }) => void): void;
  close(): void;
}

interface EventSourceClass {
  new (url: string, init?: { withCredentials?: boolean }): BrowserEventSource;
  readonly CLOSED: number;
}

/** The platform's EventSource, if it has one. */
export function platformEventSource(): EventSourceClass | undefined {
  return (globalThis as unknown as { EventSource?: EventSourceClass }).EventSource;
}

/**
 * Whether the platform's EventSource can carry this library's credentials: it cannot
 * send a header (WHATWG HTML, 9.2.2), so it needs a platform that keeps the session
 * cookie (a browser page or worker). A global EventSource without a cookie store (Node's
 * experimental one) would be refused for ever: SSE goes over fetch there.
 */
export function eventSourceUsable(): boolean {
  const g = globalThis as {
    document?: { cookie?: unknown };
    WorkerGlobalScope?: unknown;
  };
  return (
    platformEventSource() !== undefined &&
    (typeof g.document?.cookie === 'string' || typeof g.WorkerGlobalScope === 'function')
  );
}

interface StreamTicket {
  readonly ticket: string;
}

/**
 * How EventSource authenticates: it cannot send an Authorization header (WHATWG HTML,
 * 9.2.2), so the service offers an HttpOnly session cookie (`POST /v1/session`, which
 * EventSource re-sends on its own reconnects) and, where that is not offered, a
 * single-use stream ticket per connection (`POST /v1/stream-tickets`). One per watch.
 */
export class EventSourceAuth {
  /** Token version the cookie was set for; `ticket` once the service said it has no sessions. */
  private cookieFor: number | undefined;
  private mode: 'cookie' | 'ticket' | undefined;

  constructor(private readonly baseUrl: string) {}

  /** Whether this connection's URL carries a ticket (EventSource must not reconnect alone). */
  get usesTicket(): boolean {
    return this.mode === 'ticket';
  }

  /** Query parameters that authenticate one stream request (empty without a token). */
  async query(req: ConnectRequest): Promise<string> {
    const token = req.token();
    if (token === undefined) return '';
    if (this.mode !== 'ticket' && this.cookieFor !== req.tokenVersion()) {
      const res = await this.post('/v1/session', token, undefined, req.signal);
      if (res.ok) {
        this.mode = 'cookie';
        this.cookieFor = req.tokenVersion();
        return '';
      }
      if (res.status !== 404 && res.status !== 405) throw await errorOf(res);
      this.mode = 'ticket';
    }
    if (this.mode === 'cookie') return '';
    const res = await this.post('/v1/stream-tickets', token, { orderId: req.orderId }, req.signal);
    if (!res.ok) throw await errorOf(res);
    const { ticket } = (await res.json()) as StreamTicket;
    return `&ticket=${encodeURIComponent(ticket)}`;
  }

  private post(path: string, token: string, body: unknown, signal: AbortSignal): Promise<Response> {
    return fetch(`${this.baseUrl.replace(/\/+$/, '')}${path}`, {
      method: 'POST',
      headers: {
        ...bearer(token),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      credentials: 'include',
      signal,
    });
  }
}

async function errorOf(res: Response): Promise<WatchError> {
  const body: unknown = await res.json().catch(() => undefined);
  return httpError(res.status, body, res.headers.get('retry-after'));
}

/**
 * SSE through the browser's EventSource. While it can (cookie or no auth), EventSource
 * reconnects by itself after a `max_age`/`shutdown` end or a dropped connection: it
 * waits the server's `retry:` and sends Last-Event-ID (every frame's id is the cursor
 * after it), which is exactly the resume the service needs; the watch only counts the
 * reopen. With a single-use ticket, and after `token_expired`, the watch reconnects
 * itself. When EventSource gives up (any HTTP error: it does not say which), one fetch
 * of the same URL tells a 401/403/404 (permanent) from a 204 (completed) or a transient
 * failure.
 */
export function connectEventSource(
  baseUrl: string,
  auth: EventSourceAuth,
  req: ConnectRequest,
  domain: WireDomain,
): Promise<ConnectionEnd> {
  const streamUrl = orderUrl(baseUrl, req.orderId, 'stream');
  const EventSource = platformEventSource();
  if (EventSource === undefined) throw new TypeError('this platform has no EventSource');
  return auth.query(req).then(
    (ticket) =>
      new Promise<ConnectionEnd>((resolve, reject) => {
        const es = new EventSource(
          `${streamUrl}?after=${req.afterSeq}${domainQuery(domain)}${ticket}`,
          {
            withCredentials: true,
          },
        );
        let settled = false;
        let everOpen = false;
        /** The service ended the stream and EventSource is reconnecting by itself. */
        let resuming = false;
        const finish = (settle: () => void) => {
          if (settled) return;
          settled = true;
          es.close();
          req.signal.removeEventListener('abort', onAbort);
          settle();
        };
        const onAbort = () => finish(() => reject(new Error('aborted')));
        req.signal.addEventListener('abort', onAbort, { once: true });

        es.onopen = () => {
          if (everOpen) req.opened(req.cursor());
          else req.opened();
          everOpen = true;
          resuming = false;
        };
        for (const name of itemWireNames(domain)) {
          es.addEventListener(name, (m) => {
            try {
              const item = wireItem(domain, name, JSON.parse(m.data));
              if (item) req.item(item);
            } catch (err) {
              finish(() => reject(toWatchError(err)));
            }
          });
        }
        es.addEventListener('end', (m) => {
          const { reason, retryAfterMs } = JSON.parse(m.data) as {
            reason: StreamEndReason;
            retryAfterMs?: number;
          };
          if (
            reason === StreamEndReason.Completed ||
            reason === StreamEndReason.TokenExpired ||
            auth.usesTicket
          ) {
            // EventSource keeps `retry:` to itself: the advice comes from the data.
            finish(() =>
              resolve(retryAfterMs === undefined ? { reason } : { reason, retryAfterMs }),
            );
            return;
          }
          resuming = true;
          req.ended?.(reason);
        });
        es.onerror = () => {
          if (settled) return;
          if (es.readyState === EventSource.CLOSED) {
            finish(() => {
              probe(streamUrl, req, domain).then(resolve, reject);
            });
          } else if (auth.usesTicket) {
            finish(() => reject(new WatchError(ErrorCode.Unavailable, 'connection lost')));
          } else if (!resuming) {
            resuming = true;
            req.ended?.('dropped');
          }
        };
      }),
  );
}

/** Why EventSource gave up: the same request over fetch, which sees the status. */
async function probe(
  streamUrl: string,
  req: ConnectRequest,
  domain: WireDomain,
): Promise<ConnectionEnd> {
  const res = await fetch(`${streamUrl}?after=${req.cursor()}${domainQuery(domain)}`, {
    headers: { accept: 'text/event-stream', ...bearer(req.token()) },
    credentials: 'include',
    signal: req.signal,
  });
  if (res.status === 204) return { reason: StreamEndReason.Completed };
  if (res.status === 200) {
    await res.body?.cancel().catch(() => undefined);
    throw new WatchError(ErrorCode.Unavailable, 'EventSource failed');
  }
  throw await errorOf(res);
}
