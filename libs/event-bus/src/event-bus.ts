import type { Subscription } from 'rxjs';
import {
  ErrorCode,
  GatewayError,
  isTerminalStatus,
  nowUs,
  ResetReason,
  StreamEndReason,
  type OrderSnapshot,
  type OrderStatusChanged,
  type StreamItem,
} from '@app/contracts';
import {
  resolveEventBusOptions,
  type EventBusOptions,
  type OverflowPolicy,
  type ResolvedEventBusOptions,
} from './bus-options';
import { BusStats, bump } from './bus-stats';
import type { DeliverySink } from './delivery-sink';
import { OrderStore } from './order-store';
import { ReplayRing } from './replay-ring';
import { Subscriber, type BusSubscription } from './subscriber';

/** Per-subscription overrides of the bus defaults (a transport may want a deeper queue). */
export interface OpenOptions {
  /** Label for per-transport metrics. @default 'internal' */
  transport?: string;
  queueCapacity?: number;
  overflowPolicy?: OverflowPolicy;
  /**
   * End the stream with `max_age` after this many ms (0: never). Default: the bus's
   * `maxStreamAgeMs` plus a random share of `maxStreamAgeJitterMs`, so streams opened
   * together (e.g. after a deploy) do not all reconnect together.
   */
  maxAgeMs?: number;
}

/** One order's slice of the bus: its replay ring, its current state and its subscribers. */
interface OrderChannel {
  readonly ring: ReplayRing;
  readonly subscribers: Set<Subscriber>;
  snapshot: OrderSnapshot | undefined;
  evictTimer?: NodeJS.Timeout;
}

/**
 * The one event bus. It feeds from the store's event stream and fans each event out to
 * that order's subscribers only: channels are indexed by order id, so publishing costs
 * O(subscribers of the order), never O(all subscribers).
 */
export class OrderEventBus {
  readonly stats = new BusStats();
  readonly options: ResolvedEventBusOptions;
  private readonly channels = new Map<string, OrderChannel>();
  private feed?: Subscription;
  private total = 0;

  constructor(
    private readonly store: OrderStore,
    options: EventBusOptions = {},
  ) {
    this.options = resolveEventBusOptions(options);
  }

  /** Starts consuming the store's events. Idempotent. */
  start(): void {
    this.feed ??= this.store.events$.subscribe((e) => this.ingest(e));
  }

  /** Stops consuming and ends every subscription with `reason`. */
  stop(reason: StreamEndReason = StreamEndReason.Shutdown): void {
    this.feed?.unsubscribe();
    this.feed = undefined;
    this.endAll(reason);
    for (const ch of this.channels.values()) clearTimeout(ch.evictTimer);
    this.channels.clear();
  }

  /** Ends every open subscription (graceful shutdown tells clients to resume elsewhere). */
  endAll(reason: StreamEndReason): void {
    for (const ch of this.channels.values()) {
      for (const s of [...ch.subscribers]) s.end(reason);
    }
  }

  subscriberCount(orderId?: string): number {
    if (orderId === undefined) return this.total;
    return this.channels.get(orderId)?.subscribers.size ?? 0;
  }

  get orderCount(): number {
    return this.channels.size;
  }

  /** Feeds one published event to the ring and to the order's subscribers. */
  ingest(event: OrderStatusChanged): void {
    const ch = this.channel(event.orderId);
    const lastSeq = ch.snapshot?.lastSeq ?? 0;
    if (event.seq <= lastSeq) {
      this.stats.duplicatesIgnored++;
      return;
    }
    // The ring must stay contiguous: after a gap it restarts at this event.
    if (ch.ring.size > 0 && event.seq !== lastSeq + 1) ch.ring.clear();
    ch.ring.push(event);
    ch.snapshot = {
      orderId: event.orderId,
      status: event.status,
      lastSeq: event.seq,
      updatedAtUs: event.publishedAtUs,
    };
    this.stats.eventsIngested++;
    for (const s of [...ch.subscribers]) s.offerLive(event);
    if (isTerminalStatus(event.status)) this.scheduleEviction(event.orderId, ch);
  }

  /**
   * Opens a subscription: events after `afterSeq` still retained, then live events, with
   * no gap and no duplicate; a reset (with the snapshot) when `afterSeq` cannot be served
   * that way. Completes after a terminal status.
   * @throws GatewayError NotFound for an unknown order.
   */
  async open(
    orderId: string,
    afterSeq: number,
    sink: DeliverySink,
    opts: OpenOptions = {},
  ): Promise<BusSubscription> {
    const ch = this.channel(orderId);
    const transport = opts.transport ?? 'internal';
    const sub = new Subscriber(
      orderId,
      transport,
      sink,
      opts.queueCapacity ?? this.options.queueCapacity,
      opts.overflowPolicy ?? this.options.overflowPolicy,
      this.stats,
      (s) => this.release(orderId, s),
    );
    // Register before reading anything: live events published while the replay is
    // read are parked in the subscriber and reconciled by seq in startLive().
    ch.subscribers.add(sub);
    this.total++;
    bump(this.stats.subscriptionsByTransport, transport, 1);
    if (afterSeq > 0) this.stats.resumes++;
    try {
      const snapshot = ch.snapshot ?? (await this.store.getSnapshot(orderId));
      if (snapshot === undefined)
        throw new GatewayError(ErrorCode.NotFound, `order ${orderId} not found`);
      ch.snapshot ??= snapshot;
      const { backlog, cursor } = await this.replay(ch, orderId, afterSeq, snapshot);
      // Judge completion by the newest state: events ingested while the replay was read
      // may have finished the order (and a reset then already covers the terminal event).
      const current = ch.snapshot ?? snapshot;
      const terminal = isTerminalStatus(current.status) && cursor >= current.lastSeq;
      sub.startLive(backlog, cursor, terminal);
      const maxAgeMs = opts.maxAgeMs ?? this.defaultMaxAgeMs();
      if (maxAgeMs > 0) sub.expireAfter(maxAgeMs);
      return sub;
    } catch (err) {
      sub.close();
      throw err;
    }
  }

  private defaultMaxAgeMs(): number {
    const { maxStreamAgeMs, maxStreamAgeJitterMs } = this.options;
    if (maxStreamAgeMs <= 0) return 0;
    return maxStreamAgeMs + Math.floor(Math.random() * maxStreamAgeJitterMs);
  }

  /** The order's current state (from the bus when it has it, else from the store). */
  async getSnapshot(orderId: string): Promise<OrderSnapshot | undefined> {
    return this.channels.get(orderId)?.snapshot ?? this.store.getSnapshot(orderId);
  }

  /** What a client resuming after `afterSeq` missed: events, or one reset. */
  private async replay(
    ch: OrderChannel,
    orderId: string,
    afterSeq: number,
    snapshot: OrderSnapshot,
  ): Promise<{ backlog: StreamItem[]; cursor: number }> {
    if (afterSeq > snapshot.lastSeq) return this.reset(ResetReason.AheadOfLastSeq, snapshot);
    if (afterSeq === snapshot.lastSeq) return { backlog: [], cursor: afterSeq };
    const events =
      ch.ring.after(afterSeq, nowUs()) ?? (await this.store.readHistory(orderId, afterSeq));
    if (events === undefined || events.length === 0 || events[0].seq !== afterSeq + 1) {
      return this.reset(ResetReason.BeyondRetention, ch.snapshot ?? snapshot);
    }
    this.stats.eventsReplayed += events.length;
    return {
      backlog: events.map((event) => ({ kind: 'event', event })),
      cursor: events[events.length - 1].seq,
    };
  }

  private reset(
    reason: ResetReason,
    snapshot: OrderSnapshot,
  ): { backlog: StreamItem[]; cursor: number } {
    this.stats.resets[reason]++;
    return { backlog: [{ kind: 'reset', reset: { reason, snapshot } }], cursor: snapshot.lastSeq };
  }

  private channel(orderId: string): OrderChannel {
    let ch = this.channels.get(orderId);
    if (ch === undefined) {
      ch = {
        ring: new ReplayRing(this.options.ringSize, this.options.ringMaxAgeMs),
        subscribers: new Set(),
        snapshot: undefined,
      };
      this.channels.set(orderId, ch);
    }
    return ch;
  }

  private release(orderId: string, sub: Subscriber): void {
    const ch = this.channels.get(orderId);
    if (ch?.subscribers.delete(sub)) {
      this.total--;
      bump(this.stats.subscriptionsByTransport, sub.transport, -1);
    }
    // A channel opened for an unknown order holds nothing worth keeping.
    if (ch && ch.subscribers.size === 0 && ch.snapshot === undefined) this.channels.delete(orderId);
  }

  /** A finished order's ring stays for resumes during the retention window, then goes. */
  private scheduleEviction(orderId: string, ch: OrderChannel): void {
    clearTimeout(ch.evictTimer);
    ch.evictTimer = setTimeout(() => {
      if (this.channels.get(orderId) !== ch) return;
      if (ch.subscribers.size === 0) this.channels.delete(orderId);
      // Still in use (e.g. a subscriber waiting for drain): try again later, or the
      // channel would never be evicted once that subscriber leaves.
      else this.scheduleEviction(orderId, ch);
    }, this.options.ringMaxAgeMs);
    ch.evictTimer.unref();
  }
}
