import { ErrorCode } from '@app/contracts/gateway-error';
import { nowUs, StreamEndReason } from '@app/contracts/stream-envelope';
import { type StreamItem } from '@app/order-domain/order-events';
import { Backoff } from './backoff';
import { Cursor } from './cursor';
import { GiveUp, validateGiveUp } from './give-up';
import { ItemQueue, sleep } from './item-queue';
import { OnlineWatcher } from './online';
import { RenewingConnection } from './renewal';
import { TokenSource, type TokenListener, type TokenSourceOptions } from './token-source';
import { eventSourceUsable } from './transports/sse-event-source';
import type {
  ConnectionEnd,
  Connector,
  ConnectorFactory,
  ConnectorOptions,
} from './transports/connector';
import type {
  ConnectionEvent,
  EndItem,
  OrderWatch,
  TransportName,
  WatchItem,
  WatchOptions,
  WatchStats,
} from './types';
import { toWatchError, WatchError } from './watch-error';

/** @default 25 s long-poll hold (below common 30 s proxy timeouts) */
export const DEFAULT_LONG_POLL_WAIT_S = 25;

/** @default 1,000 items buffered for a slow consumer before the watch pauses */
export const DEFAULT_MAX_BUFFERED_ITEMS = 1_000;

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Why the current connection was dropped on purpose. */
type DropReason = 'forced' | 'offline' | 'backpressure';

/** The entry point's connector for `transport`; a TypeError when it has none. */
export function connectorFor(
  transport: TransportName,
  connectors: Partial<Record<TransportName, ConnectorFactory>>,
): ConnectorFactory {
  const factory = connectors[transport];
  if (factory === undefined) {
    throw new TypeError(
      transport === 'grpc'
        ? "transport 'grpc' needs Node (the package's node entry point); this one has sse, ws, websocket, longpoll"
        : `unknown transport '${String(transport)}'`,
    );
  }
  return factory;
}

/** What a connector is built with, from a watch's (or a shared client's) options. */
export function connectorOptions(
  options: Pick<WatchOptions, 'baseUrl' | 'longPollWaitS' | 'useEventSource' | 'domain'>,
): ConnectorOptions {
  return {
    baseUrl: options.baseUrl,
    longPollWaitS: options.longPollWaitS ?? DEFAULT_LONG_POLL_WAIT_S,
    useEventSource: options.useEventSource ?? eventSourceUsable(),
    domain: options.domain,
  };
}

/**
 * Follows one order over one transport until it completes, the watch is aborted, or a
 * permanent failure; see the README for the rules. `connectors` is what the entry point
 * offers (the browser bundle has no gRPC).
 */
/**
 * @param tokens a token source the watch shares (a client's): the watch listens to it
 *   and leaves it running when it ends; without one, the watch has its own.
 */
export function createWatch(
  orderId: string,
  options: WatchOptions,
  connectors: Partial<Record<TransportName, ConnectorFactory>>,
  tokens?: TokenSource,
): OrderWatch {
  const factory = connectorFor(options.transport, connectors);
  if (typeof orderId !== 'string' || orderId === '') throw new TypeError('orderId is required');
  const after = options.after ?? 0;
  if (!Number.isSafeInteger(after) || after < 0) throw new TypeError('after must be a seq >= 0');
  const maxBuffered = options.maxBufferedItems ?? DEFAULT_MAX_BUFFERED_ITEMS;
  if (!Number.isSafeInteger(maxBuffered) || maxBuffered < 1) {
    throw new TypeError('maxBufferedItems must be an integer >= 1');
  }
  validateGiveUp(options);
  return new Watch(orderId, options, factory, after, maxBuffered, tokens);
}

class Watch implements OrderWatch {
  readonly stats: WatchStats = {
    items: {},
    duplicates: 0,
    lost: 0,
    reconnects: 0,
    resumes: 0,
    tokenRefreshes: 0,
    backpressurePauses: 0,
  };
  readonly done: Promise<EndItem>;
  readonly transport: TransportName;
  private readonly queue: ItemQueue<WatchItem>;
  /** What the watch received: where the next connection resumes and what is a duplicate. */
  private readonly received: Cursor;
  private settleDone!: (end: EndItem) => void;
  /** `done` has settled: the consumer has nothing more coming. */
  private settled = false;
  /** The end the watch reached by itself, queued behind what the consumer has not taken. */
  private ended: EndItem | undefined;
  private readonly abort = new AbortController();
  private readonly tokens: TokenSource;
  /** Lets go of the token source: stops the watch's own, or stops listening to a shared one. */
  private readonly releaseTokens: () => void;
  private readonly backoff: Backoff;
  private readonly giveUp: GiveUp;
  private readonly connector: Connector;
  private readonly online: OnlineWatcher;
  /** The open attempt's controller, with why it was dropped on purpose (if it was). */
  private current: { ctl: AbortController; drop?: DropReason } | undefined;
  /** The open attempt, when a new token renews its connection (make-before-break). */
  private renewing: RenewingConnection | undefined;
  private connections = 0;
  private readonly onExternalAbort = () => this.close();

  constructor(
    readonly orderId: string,
    private readonly options: WatchOptions,
    factory: ConnectorFactory,
    after: number,
    private readonly maxBuffered: number,
    sharedTokens?: TokenSource,
  ) {
    this.transport = options.transport;
    this.received = new Cursor(after);
    this.queue = new ItemQueue<WatchItem>(
      after,
      (item) => this.took(item),
      () => this.close(),
    );
    this.backoff = new Backoff(options.backoff);
    this.giveUp = new GiveUp(options);
    const listener: TokenListener = {
      onRefresh: (reason) => {
        this.stats.tokenRefreshes++;
        this.emit({ type: 'token', reason });
      },
      onChange: () => this.renewing?.renew(),
    };
    if (sharedTokens !== undefined) {
      this.tokens = sharedTokens;
      this.releaseTokens = sharedTokens.listen(listener);
    } else {
      const own = new TokenSource({ ...tokenSourceOptions(options), ...listener });
      this.tokens = own;
      this.releaseTokens = () => own.stop();
    }
    this.connector = factory(connectorOptions(options));
    this.online = new OnlineWatcher(options.pauseWhenOffline ?? true, () => this.drop('offline'));
    const signal = options.signal;
    if (signal?.aborted) this.abort.abort();
    signal?.addEventListener('abort', this.onExternalAbort, { once: true });
    this.done = new Promise((resolve) => (this.settleDone = resolve));
    void this.run();
  }

  get cursor(): number {
    return this.queue.handed;
  }

  get buffered(): number {
    return this.queue.size;
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchItem> {
    return this.queue[Symbol.asyncIterator]();
  }

  reconnect(): void {
    this.drop('forced');
  }

  close(): void {
    this.abort.abort();
    // Ended by itself with items the consumer has not taken: it leaves them.
    if (this.ended !== undefined) this.cut();
  }

  /**
   * The consumer stops here: what it has not taken is discarded, the next (and last)
   * item it gets is an `aborted` end at the position it was handed, and `done` settles.
   */
  private cut(): void {
    if (this.settled) return;
    const end: EndItem = { kind: 'end', reason: 'aborted', lastSeq: this.queue.handed };
    this.queue.finish(end, true);
    this.settle(end);
  }

  private settle(end: EndItem): void {
    this.settled = true;
    this.settleDone(end);
  }

  /** The consumer took `item`: count it, and settle `done` with the end. */
  private took(item: WatchItem): void {
    this.stats.items[item.kind] = (this.stats.items[item.kind] ?? 0) + 1;
    if (item.kind === 'end' && !this.settled) this.settle(item);
  }

  private drop(reason: DropReason): void {
    const c = this.current;
    if (c === undefined || c.ctl.signal.aborted) return;
    c.drop = reason;
    c.ctl.abort();
  }

  private emit(e: ConnectionEvent): void {
    try {
      this.options.onConnection?.(e);
    } catch {
      // A throwing status callback must not end the watch.
    }
  }

  private accept(item: StreamItem): void {
    const admission = this.received.admit(item);
    if (!admission.accept) {
      this.stats.duplicates++;
      return;
    }
    if (admission.gap) {
      this.stats.lost += admission.gap.toSeq - admission.gap.fromSeq + 1;
      this.queue.push(admission.gap, admission.gap.toSeq);
    }
    this.queue.push(item, this.received.value);
    // The consumer is this far behind: let the connection go rather than buffer without
    // bound (or stop reading and make the service drop for us). The items the
    // transport still hands over are discarded, so the cursor stays at the last one
    // queued and the resume starts right after it.
    if (this.queue.size >= this.maxBuffered) this.drop('backpressure');
  }

  private opened(afterSeq: number): void {
    this.backoff.reset();
    this.giveUp.opened();
    this.connections++;
    const reconnect = this.connections > 1;
    if (reconnect) {
      this.stats.reconnects++;
      if (afterSeq > 0) this.stats.resumes++;
    }
    this.emit({ type: 'open', afterSeq, reconnect });
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    let end: EndItem;
    try {
      end = await this.loop(signal);
    } catch (err) {
      end = this.end('error', toWatchError(err));
    } finally {
      this.options.signal?.removeEventListener('abort', this.onExternalAbort);
      this.releaseTokens();
      this.online.close();
      this.connector.close();
    }
    if (signal.aborted) {
      this.cut();
      return;
    }
    // `done` settles when the consumer takes this end (or leaves before it), so its
    // lastSeq is never ahead of what the consumer was handed.
    this.ended = end;
    this.queue.finish(end, false);
  }

  private end(reason: 'completed' | 'aborted'): EndItem;
  private end(reason: 'error', error: WatchError): EndItem;
  private end(reason: EndItem['reason'], error?: WatchError): EndItem {
    const lastSeq = this.received.value;
    return reason === 'error' && error
      ? { kind: 'end', reason, lastSeq, error }
      : { kind: 'end', reason: reason as 'completed' | 'aborted', lastSeq };
  }

  /** getToken() threw: a transient failure that says so. */
  private tokenError(prefix = ''): WatchError {
    return new WatchError(
      ErrorCode.Unavailable,
      `${prefix}getToken() failed: ${errorText(this.tokens.lastError)}`,
    );
  }

  /** A failure before any connection (getToken() threw): wait the backoff delay. */
  private async retryLater(error: WatchError, signal: AbortSignal): Promise<EndItem | undefined> {
    const giveUp = this.giveUp.failed(error);
    if (giveUp) return this.end('error', giveUp);
    const delayMs = this.backoff.next();
    this.emit({ type: 'retrying', delayMs, reason: error.message, error });
    await sleep(delayMs, signal);
    return undefined;
  }

  private async loop(signal: AbortSignal): Promise<EndItem> {
    // Connect once watchOrder() has returned: no callback runs before the caller holds
    // the watch (and has started iterating it).
    await Promise.resolve();
    this.tokens.start();
    /** getToken() was asked after a refusal and no connection has opened since. */
    let askedAfterRefusal = false;
    while (!signal.aborted) {
      if (!this.online.online) {
        this.emit({ type: 'paused', reason: 'offline' });
        await this.online.waitOnline(signal);
        if (signal.aborted) break;
      }
      if (this.tokens.missing && (await this.tokens.refresh('expiring')) === 'failed') {
        const gaveUp = await this.retryLater(this.tokenError(), signal);
        if (gaveUp) return gaveUp;
        continue;
      }
      const ctl = new AbortController();
      const onAbort = () => ctl.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      const attempt = { ctl } as { ctl: AbortController; drop?: DropReason };
      this.current = attempt;
      const afterSeq = this.received.value;
      const tokenVersion = this.tokens.version;
      this.emit({ type: 'connecting', afterSeq, attempt: this.backoff.attempts, atUs: nowUs() });
      let delayMs: number;
      let why: string;
      let advisedMs: number | undefined;
      /** This attempt failed (as opposed to an end or a planned drop). */
      let failure: WatchError | undefined;
      try {
        const conn = new RenewingConnection(
          this.connector,
          (linkSignal, successor) => {
            const resumeAfter = this.received.value;
            const version = this.tokens.version;
            return {
              orderId: this.orderId,
              afterSeq: resumeAfter,
              token: () => this.tokens.current,
              tokenVersion: () => this.tokens.version,
              signal: linkSignal,
              opened: (resumedAfter) => {
                askedAfterRefusal = false;
                if (successor) this.emit({ type: 'token', reason: 'renewed' });
                else this.opened(resumedAfter ?? resumeAfter);
                // The token changed while this connection was being made.
                if (version !== this.tokens.version) this.renewing?.renew();
              },
              item: (item) => {
                // The transports read any domain's items; a watch hands out its domain's
                // (the order's by default, WatchItem).
                if (!linkSignal.aborted) this.accept(item as StreamItem);
              },
              ended: (reason) => this.emit({ type: 'retrying', delayMs: 0, reason }),
              cursor: () => this.received.value,
            };
          },
          ctl.signal,
        );
        // A transport that sends the token with every request needs no new connection.
        this.renewing = this.connector.tokenPerRequest ? undefined : conn;
        const end: ConnectionEnd = await conn.ended;
        if (signal.aborted) break;
        // The items that came after a drop were discarded, so the end that followed them
        // (a long-poll answer's `completed`, say) does not hold for the cursor: resume.
        if (attempt.drop !== undefined) throw new Error(`dropped (${attempt.drop})`);
        const reason = end.reason as StreamEndReason;
        if (reason === StreamEndReason.Completed) return this.end('completed');
        why = end.reason;
        advisedMs = end.retryAfterMs;
        delayMs = reason === StreamEndReason.TokenExpired ? 0 : this.backoff.next(advisedMs);
        if (reason === StreamEndReason.TokenExpired) {
          if (!this.tokens.canRefresh) {
            return this.end(
              'error',
              new WatchError(
                ErrorCode.Unauthenticated,
                'token expired and no getToken() to renew it',
              ),
            );
          }
          // Ask only if nobody has replaced the token this connection was opened with.
          const renewed =
            this.tokens.version !== tokenVersion ||
            (await this.tokens.refresh('expired')) !== 'failed';
          if (!renewed) {
            failure = this.tokenError();
            why = failure.message;
            delayMs = this.backoff.next();
          }
        }
      } catch (err) {
        if (signal.aborted) break;
        if (attempt.drop !== undefined) {
          // Dropped on purpose: resume at once (offline: once the browser is back;
          // backpressure: once the consumer caught up), without counting a failure.
          why = attempt.drop;
          delayMs = 0;
        } else {
          const e = toWatchError(err);
          if (e.auth) {
            if (askedAfterRefusal || !this.tokens.canRefresh) return this.end('error', e);
            const refreshed = await this.tokens.refresh('refused');
            if (refreshed === 'unchanged') return this.end('error', e);
            if (refreshed === 'changed') {
              askedAfterRefusal = true;
              why = e.message;
              delayMs = 0;
            } else {
              // getToken() itself failed: transient, ask again after the backoff delay.
              failure = this.tokenError(`${e.message}; `);
              why = failure.message;
              delayMs = this.backoff.next();
            }
          } else if (e.permanent) {
            return this.end('error', e);
          } else {
            failure = e;
            why = e.message;
            advisedMs = e.retryAfterMs;
            delayMs = this.backoff.next(advisedMs);
          }
        }
      } finally {
        signal.removeEventListener('abort', onAbort);
        ctl.abort();
        this.current = undefined;
        this.renewing = undefined;
      }
      if (failure !== undefined) {
        const giveUp = this.giveUp.failed(failure);
        if (giveUp) return this.end('error', giveUp);
      }
      if (attempt.drop === 'backpressure') {
        this.stats.backpressurePauses++;
        this.emit({ type: 'paused', reason: 'backpressure' });
        // Half the bound, so a consumer just below it does not cost a reconnect per item.
        await this.queue.drained(Math.floor(this.maxBuffered / 2), signal);
        continue;
      }
      this.emit({
        type: 'retrying',
        delayMs,
        reason: why,
        ...(advisedMs !== undefined ? { advisedMs } : {}),
        ...(failure !== undefined ? { error: failure } : {}),
      });
      await sleep(delayMs, signal);
    }
    return this.end('aborted');
  }
}

/** The token options of a watch (or of a client, shared by its watches). */
export function tokenSourceOptions(
  options: Pick<WatchOptions, 'token' | 'getToken' | 'refreshBeforeExpiryMs' | 'backoff'>,
): TokenSourceOptions {
  return {
    ...(options.token !== undefined ? { token: options.token } : {}),
    ...(options.getToken ? { getToken: options.getToken } : {}),
    ...(options.refreshBeforeExpiryMs !== undefined
      ? { refreshBeforeExpiryMs: options.refreshBeforeExpiryMs }
      : {}),
    backoff: new Backoff(options.backoff),
  };
}
