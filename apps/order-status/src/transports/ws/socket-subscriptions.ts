import {
  stringBytes,
  ErrorCode,
  GatewayError,
  StreamEndReason,
  type ByteBudget,
} from '@app/contracts';
import type { BusSubscription, StreamEventBus } from '@app/event-bus';
import type { EngineBackpressure } from './engine-backpressure';
import { WS_TRANSPORT, type OrdersSocket } from './orders-ws.events';
import { SocketSink } from './socket-sink';
import { WS_SUBSCRIPTION_OVERHEAD_BYTES, WS_SUBSCRIPTIONS_RETRY_AFTER_MS } from './ws-limits';

/** One order followed by the socket; `sub` is set once `bus.open()` resolved. */
interface Entry {
  readonly sink: SocketSink;
  sub?: BusSubscription;
  /** Unsubscribed, replaced or the socket went away. */
  cancelled: boolean;
}

/** Where a socket's undelivered items are (see `OrdersGateway.inspect`). */
export interface SocketBacklog {
  /** Packets in the engine's write buffer, not yet taken by the transport. */
  readonly engineBuffered: number;
  /** Items each order's bus subscription holds (replay backlog plus bounded queue). */
  readonly subscriptions: readonly { readonly orderId: string; readonly pending: number }[];
}

export interface SubscribeResult {
  readonly lastSeq: number;
  /** Sends what the bus has produced so far; call it right after acknowledging. */
  readonly start: () => void;
}

/**
 * The orders one socket follows: at most one bus subscription per order, in a Map keyed
 * by order id, all released by `close()` when the socket disconnects.
 *
 * Subscribing again to an order the socket already follows replaces the old subscription
 * (it is closed without an `end`): a client can move its resume point, or resubscribe
 * after an `end`, without unsubscribing first. Concurrent `subscribe`s for one order are
 * resolved the same way: the last one wins and the earlier ones are answered with
 * `failed_precondition`.
 */
export class SocketSubscriptions {
  private readonly entries = new Map<string, Entry>();
  private closed = false;

  constructor(
    private readonly bus: StreamEventBus,
    private readonly socket: OrdersSocket,
    private readonly backpressure: EngineBackpressure,
    private readonly maxSubscriptions: number,
    /**
     * Per-order authorization, run on every subscribe (first or resume) before anything
     * is read from the bus; throws PermissionDenied / NotFound.
     */
    private readonly authorize: (orderId: string) => Promise<void> = async () => {},
    /** Shared by every socket of the process: the subscriptions' bytes, all sockets together. */
    private readonly budget?: ByteBudget,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  backlog(): SocketBacklog {
    return {
      engineBuffered: this.backpressure.buffered,
      subscriptions: [...this.entries].map(([orderId, e]) => ({
        orderId,
        pending: e.sub?.pending ?? 0,
      })),
    };
  }

  /**
   * Opens (or replaces) the subscription to `orderId`.
   * @throws GatewayError ResourceExhausted, NotFound, PermissionDenied, or
   *   FailedPrecondition when superseded.
   */
  async subscribe(orderId: string, afterSeq: number): Promise<SubscribeResult> {
    if (this.closed) throw superseded(orderId);
    const previous = this.entries.get(orderId);
    if (previous === undefined) {
      if (this.entries.size >= this.maxSubscriptions) {
        throw new GatewayError(
          ErrorCode.ResourceExhausted,
          `at most ${this.maxSubscriptions} subscriptions per socket`,
        );
      }
      // An open subscription is a promise to its client: a new one is refused instead.
      if (this.budget?.tryReserve(wsSubscriptionBytes(orderId)) === false) {
        throw new GatewayError(
          ErrorCode.ResourceExhausted,
          'too many socket.io subscriptions on this instance; retry later',
          WS_SUBSCRIPTIONS_RETRY_AFTER_MS,
        );
      }
    } else {
      // The replacement takes over the slot and its bytes.
      this.cancel(previous);
    }

    const entry: Entry = {
      sink: new SocketSink(this.socket, orderId, this.backpressure, this.bus.domain, () =>
        this.forget(orderId, entry),
      ),
      cancelled: false,
    };
    // Reserved before awaiting, so concurrent subscribes count against the limit.
    this.entries.set(orderId, entry);
    try {
      await this.authorize(orderId);
      if (entry.cancelled) throw superseded(orderId);
      entry.sub = await this.bus.open(orderId, afterSeq, entry.sink, { transport: WS_TRANSPORT });
      const snapshot = await this.bus.getSnapshot(orderId);
      if (entry.cancelled) throw superseded(orderId);
      return { lastSeq: snapshot?.lastSeq ?? afterSeq, start: () => entry.sink.open() };
    } catch (err) {
      this.cancel(entry);
      this.forget(orderId, entry);
      throw err;
    }
  }

  /** Releases the subscription to `orderId`; false when there was none. */
  unsubscribe(orderId: string): boolean {
    const entry = this.entries.get(orderId);
    if (entry === undefined) return false;
    this.cancel(entry);
    this.delete(orderId);
    return true;
  }

  /**
   * The socket's token expired: every open subscription ends with `token_expired` (the
   * client sees `end` per order and resumes from its last seq on a new connection with
   * a fresh token); subscribes still opening are cancelled.
   */
  expire(): void {
    this.closed = true;
    for (const entry of [...this.entries.values()]) {
      if (entry.sub !== undefined && !entry.cancelled) entry.sub.end(StreamEndReason.TokenExpired);
      else this.cancel(entry);
    }
    this.clear();
  }

  /** The socket disconnected: release everything, now and for subscribes still opening. */
  close(): void {
    this.closed = true;
    for (const entry of this.entries.values()) this.cancel(entry);
    this.clear();
  }

  private cancel(entry: Entry): void {
    entry.cancelled = true;
    entry.sink.discard();
    // When bus.open() is still pending, subscribe() closes it as soon as it resolves.
    entry.sub?.close();
  }

  private forget(orderId: string, entry: Entry): void {
    if (this.entries.get(orderId) === entry) this.delete(orderId);
  }

  /** Every removal goes through here or clear(), so the bytes are given back once. */
  private delete(orderId: string): void {
    if (this.entries.delete(orderId)) this.budget?.release(wsSubscriptionBytes(orderId));
  }

  private clear(): void {
    for (const orderId of [...this.entries.keys()]) this.delete(orderId);
  }
}

/** Estimated bytes one subscription holds: its entry, sink and bus subscriber, the order id. */
export function wsSubscriptionBytes(orderId: string): number {
  return WS_SUBSCRIPTION_OVERHEAD_BYTES + stringBytes(orderId);
}

function superseded(orderId: string): GatewayError {
  return new GatewayError(
    ErrorCode.FailedPrecondition,
    `subscription to ${orderId} was cancelled before it started (unsubscribed, replaced or disconnected)`,
  );
}
