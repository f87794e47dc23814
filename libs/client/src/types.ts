import type { StreamItem } from '@app/order-domain/order-events';
import type { StreamDomain } from '@app/contracts/stream-domain';
import type { WatchError } from './watch-error';

/** `ws` is socket.io; `websocket` the raw WebSocket (RFC 6455) route. */
export type TransportName = 'sse' | 'ws' | 'websocket' | 'longpoll' | 'grpc';

/**
 * Seqs the service never accounted for: neither delivered, nor covered by a `skipped`
 * range or a `reset`. The client reports them instead of hiding them; the cursor moves on.
 */
export interface GapItem {
  readonly kind: 'gap';
  readonly fromSeq: number;
  readonly toSeq: number;
}

/**
 * The last item of every watch; nothing follows it. `lastSeq` is the seq of the last item
 * handed out before it (the position to resume after).
 */
export type EndItem =
  | { readonly kind: 'end'; readonly reason: 'completed'; readonly lastSeq: number }
  | { readonly kind: 'end'; readonly reason: 'aborted'; readonly lastSeq: number }
  | {
      readonly kind: 'end';
      readonly reason: 'error';
      readonly lastSeq: number;
      readonly error: WatchError;
    };

/**
 * What a watch yields, in order: the service's items (`event`, `reset`, `skipped` and
 * every other kind the contracts define, such as `tracking`), `gap` when seqs went
 * missing without a word from the service, and one final `end`.
 */
export type WatchItem = StreamItem | GapItem | EndItem;

/** How the connection is doing; for status lines and pills, not for data. */
export type ConnectionEvent =
  | {
      readonly type: 'connecting';
      /** The seq the connection resumes after: what the watch received (see `buffered`). */
      readonly afterSeq: number;
      readonly attempt: number;
      /** Epoch µs: an event published before this is a replay, not a live delivery. */
      readonly atUs: number;
    }
  | { readonly type: 'open'; readonly afterSeq: number; readonly reconnect: boolean }
  | {
      readonly type: 'retrying';
      readonly delayMs: number;
      /** A StreamEndReason the service gave, `dropped`, `forced`, or the error's message. */
      readonly reason: string;
      /** The server's own advice, when it gave one (the delay then follows it). */
      readonly advisedMs?: number;
      /**
       * When the attempt failed (rather than the service ending the stream): why, with
       * the URL and the network cause when the service never answered.
       */
      readonly error?: WatchError;
    }
  /**
   * No connection until the cause is over: `offline` until the browser is back,
   * `backpressure` until the consumer has drained the buffer to half of
   * `maxBufferedItems` (then the watch resumes after the last item it queued).
   */
  | { readonly type: 'paused'; readonly reason: 'offline' | 'backpressure' }
  /**
   * getToken() was asked (`expiring`: ahead of expiry; `expired`: after a
   * `token_expired` end; `refused`: after a 401/403), or `renewed`: the stream moved
   * to a new token without a break (a successor connection opened, the old one closed).
   */
  | {
      readonly type: 'token';
      readonly reason: 'expiring' | 'expired' | 'refused' | 'renewed';
    };

export interface WatchStats {
  /** Items the consumer has taken, by kind (event, reset, skipped, gap, ..., end). */
  readonly items: Record<string, number>;
  /** Items at or below the cursor (a replay overlapping what was seen): dropped. */
  duplicates: number;
  /** Seqs reported in `gap` items. */
  lost: number;
  /** Connections opened after the first one. */
  reconnects: number;
  /** Reconnects that resumed after a seq > 0. */
  resumes: number;
  /** getToken() calls. */
  tokenRefreshes: number;
  /** Connections let go because the consumer fell `maxBufferedItems` behind. */
  backpressurePauses: number;
}

export interface BackoffOptions {
  /** @default 250 ms: first delay cap (full jitter: a random delay below it) */
  readonly baseMs?: number;
  /** @default 10_000 ms: largest delay cap */
  readonly maxMs?: number;
}

export interface WatchOptions {
  readonly transport: TransportName;
  /**
   * `http(s)://host:port` of the service. For gRPC: `host:port` (or `http://host:port`,
   * `https://host:port` for TLS) of its gRPC listener.
   */
  readonly baseUrl: string;
  /**
   * The domain of the service's events (their names and messages on each wire): any
   * domain, whose items the watch hands out under the order's item types (`WatchItem`,
   * the library's public default) since they are only known at run time.
   * @default the order domain, the service's own
   */
  readonly domain?: StreamDomain;
  /** A bearer token. With `getToken`, the first one (else getToken() is asked first). */
  readonly token?: string;
  /**
   * Asked for a fresh token before the current one expires (JWT `exp`), after a stream
   * ended with `token_expired`, and once after an authentication or permission refusal.
   * A new token moves an open stream to it without a break (see the README). A throw
   * or a rejection is a transient failure: asked again after the backoff delay.
   */
  readonly getToken?: () => string | Promise<string>;
  /**
   * Failed attempts in a row (since the start or the last open) after which the watch
   * ends with the last error. @default unlimited
   */
  readonly maxAttempts?: number;
  /**
   * How long the watch may fail in a row (since it started, or since its connection was
   * lost) before it ends with the last error (`Infinity`: never).
   * @default 30_000 ms until a first connection opens; unlimited after it
   */
  readonly giveUpAfterMs?: number;
  /** Resume after this seq. @default 0 (everything still retained) */
  readonly after?: number;
  /** Aborting ends the watch (`end` with reason `aborted`) and releases everything. */
  readonly signal?: AbortSignal;
  readonly backoff?: BackoffOptions;
  /**
   * Renew this long before the token's `exp`, but only once a third of its lifetime
   * (`exp - iat`) is left, so a short token is renewed once per lifetime.
   * @default 30_000 ms
   */
  readonly refreshBeforeExpiryMs?: number;
  /**
   * Items the watch buffers for a consumer that iterates more slowly than they arrive.
   * When the buffer is full the watch lets the connection go, waits until the consumer
   * has taken it down to half, and resumes after the last item it buffered: nothing is
   * lost or repeated, and the service never has to drop anything for this reader. A
   * `gap` travels with the item that revealed it and the final `end` is always queued,
   * so the buffer holds at most `maxBufferedItems + 2`. A positive integer.
   * @default 1_000
   */
  readonly maxBufferedItems?: number;
  /** Long-poll hold in seconds. @default 25 */
  readonly longPollWaitS?: number;
  /**
   * Browser only: stop reconnecting while `navigator.onLine` is false, reconnect on
   * `online`. @default true
   */
  readonly pauseWhenOffline?: boolean;
  /**
   * SSE: use the platform's EventSource (cookie or stream-ticket auth, its own
   * Last-Event-ID reconnects) instead of fetch. @default true where EventSource exists
   * and the platform keeps cookies (a browser page or worker); false elsewhere (Node,
   * even with a global EventSource)
   */
  readonly useEventSource?: boolean;
  /** Connection life cycle, for status displays and logs. */
  readonly onConnection?: (e: ConnectionEvent) => void;
}

/**
 * A running watch: iterate it (once). Its position (`cursor`, an end's `lastSeq`) is the
 * seq of the last item the iteration handed out, never of what the watch has buffered
 * beyond it: save it, pass it back as `after`, and the new watch yields every later seq
 * exactly once.
 */
export interface OrderWatch extends AsyncIterable<WatchItem> {
  readonly orderId: string;
  readonly transport: TransportName;
  /**
   * The seq to resume after: that of the last item the consumer has taken (`after`
   * before the first). Items the watch has received and not yet handed out do not
   * count; the watch's own reconnects resume after those, so nothing arrives twice.
   */
  readonly cursor: number;
  /** Items received and not yet taken by the consumer. */
  readonly buffered: number;
  readonly stats: Readonly<WatchStats>;
  /** Drops the current connection and resumes at once (the demo's button). */
  reconnect(): void;
  /**
   * Ends the watch, like aborting its signal: what the consumer has not taken is
   * discarded and the next item it gets is the `aborted` end.
   */
  close(): void;
  /**
   * The final `end` item, once the iteration is over: the consumer took it, left the
   * loop (`break`, `return`, a throw), or closed the watch. `lastSeq` is then `cursor`.
   * After an early exit the end is `aborted`, even if the watch had completed or failed
   * behind items the consumer never took. It does not settle while a consumer that is
   * still iterating has items left to take.
   */
  readonly done: Promise<EndItem>;
}
