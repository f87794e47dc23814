import { ErrorCode, HTTP_STATUS_BY_CODE } from '@app/contracts/gateway-error';
import { isErrorCode, networkError, toWatchError, WatchError } from '../watch-error';
import {
  domainQuery,
  orderUrl,
  type ConnectionEnd,
  type ConnectorFactory,
  type ConnectRequest,
} from './connector';
import { wireItem, type WireDomain } from './wire-items';

/** The subprotocol the service speaks (its raw WebSocket route answers it). */
export const WEBSOCKET_PROTOCOL = 'order-status.v1';
/** The token travels as a second subprotocol: a WebSocket cannot send headers. */
const BEARER_PROTOCOL_PREFIX = 'bearer.';
/** A close code the service uses for a refusal: 4000 + the HTTP status of the error. */
const APPLICATION_CLOSE_BASE = 4000;

/** The part of the WHATWG WebSocket used here (browsers, Node 22+'s global). */
interface PlatformWebSocket {
  readonly protocol: string;
  onopen: (() => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  close(code?: number, reason?: string): void;
}
export type WebSocketClass = new (url: string, protocols?: string[]) => PlatformWebSocket;

/** The platform's WebSocket, if it has one (browsers, Node 22+). */
export function platformWebSocket(): Promise<WebSocketClass | undefined> {
  return Promise.resolve((globalThis as unknown as { WebSocket?: WebSocketClass }).WebSocket);
}

/** One frame of the raw WebSocket transport. */
interface Frame {
  readonly type?: unknown;
  readonly data?: unknown;
}

/** An `error` frame (`{code, message, retryAfterMs?}`) with its close code, as a WatchError. */
function refusal(data: unknown, closeCode: number): WatchError {
  const e = data as { code?: unknown; message?: unknown; retryAfterMs?: unknown } | undefined;
  const code = isErrorCode(e?.code) ? e.code : ErrorCode.Unavailable;
  return new WatchError(
    code,
    `${typeof e?.message === 'string' ? e.message : 'refused'} (WebSocket ${closeCode})`,
    typeof e?.retryAfterMs === 'number' ? e.retryAfterMs : undefined,
    HTTP_STATUS_BY_CODE[code],
  );
}

/**
 * Raw WebSocket (`/v1/orders/:id/ws?after=`, RFC 6455) with a WHATWG-shaped WebSocket: the
 * browser's, or in Node the `ws` package's (Node's global one never says why a connection
 * failed). A browser cannot send headers, so the token goes as the subprotocol
 * `bearer.<token>` beside `order-status.v1` (without a token, the session cookie a browser
 * sends is the credential). The service's `open` frame says the stream was accepted; one
 * JSON frame per item follows; `end` or `error` precede the close. A new token needs a new
 * connection, as SSE's.
 */
export function websocketConnectorWith(
  load: () => Promise<WebSocketClass | undefined>,
): ConnectorFactory<WireDomain> {
  return (opts) => ({
    connect: async (req) => {
      const WebSocketImpl = await load();
      if (WebSocketImpl === undefined) {
        throw new TypeError("transport 'websocket' needs a WebSocket (a browser, Node 22+ or ws)");
      }
      return connectWebSocket(WebSocketImpl, opts.baseUrl, req, opts.domain);
    },
    close: () => undefined,
  });
}

/** The browser's (or the platform's global) WebSocket. */
export const websocketConnector: ConnectorFactory<WireDomain> =
  websocketConnectorWith(platformWebSocket);

function connectWebSocket(
  WebSocketImpl: WebSocketClass,
  baseUrl: string,
  req: ConnectRequest,
  domain: WireDomain,
): Promise<ConnectionEnd> {
  const url = `${orderUrl(baseUrl, req.orderId, 'ws').replace(/^http/, 'ws')}?after=${req.afterSeq}${domainQuery(domain)}`;
  const token = req.token();
  const protocols = token
    ? [WEBSOCKET_PROTOCOL, `${BEARER_PROTOCOL_PREFIX}${token}`]
    : [WEBSOCKET_PROTOCOL];
  return new Promise((resolve, reject) => {
    const ws = new WebSocketImpl(url, protocols);
    let opened = false;
    let failure: unknown;
    let outcome: { end: ConnectionEnd } | { error: unknown } | undefined;
    const onAbort = () => {
      outcome = { error: new Error('aborted') };
      ws.close(1000);
    };
    req.signal.addEventListener('abort', onAbort, { once: true });
    ws.onopen = () => {
      opened = true;
    };
    ws.onmessage = (ev) => {
      if (outcome !== undefined || typeof ev.data !== 'string') return;
      try {
        const frame = JSON.parse(ev.data) as Frame;
        const type = String(frame.type);
        if (type === 'open') {
          // Authenticated, authorized and subscribed: the items follow.
          req.opened();
        } else if (type === 'end') {
          const end = frame.data as { reason?: unknown; retryAfterMs?: unknown } | undefined;
          const reason = String(end?.reason);
          outcome = {
            end:
              typeof end?.retryAfterMs === 'number'
                ? { reason, retryAfterMs: end.retryAfterMs }
                : { reason },
          };
        } else if (type === 'error') {
          outcome = { error: frame.data };
        } else {
          const item = wireItem(domain, type, frame.data);
          if (item) req.item(item);
        }
      } catch (err) {
        outcome = { error: toWatchError(err) };
        ws.close(1000);
      }
    };
    // An error event is always followed by close, which settles; ws's carries the cause.
    ws.onerror = (ev) => {
      failure = (ev as { error?: unknown } | undefined)?.error ?? ev;
    };
    ws.onclose = ({ code, reason }) => {
      req.signal.removeEventListener('abort', onAbort);
      ws.onopen = ws.onmessage = ws.onerror = ws.onclose = null;
      if (outcome !== undefined && 'end' in outcome) resolve(outcome.end);
      else if (outcome !== undefined && outcome.error instanceof Error) reject(outcome.error);
      else if (outcome !== undefined || code >= APPLICATION_CLOSE_BASE) {
        reject(refusal(outcome?.error ?? { code: reason }, code));
      } else if (!opened) {
        // Refused before the upgrade (a foreign Origin, 403) or not reachable at all.
        reject(
          networkError(url, failure ?? new Error(`WebSocket closed with ${code} before it opened`)),
        );
      } else {
        reject(new WatchError(ErrorCode.Unavailable, `WebSocket closed (${code} ${reason})`));
      }
    };
  });
}
