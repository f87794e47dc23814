import type { Subscription } from 'rxjs';
import {
  ErrorCode,
  GatewayError,
  isTerminalStatus,
  nowUs,
  itemOf,
  ResetReason,
  StreamEndReason,
  type OrderEvent,
  type OrderSnapshot,
  type StreamItem,
} from '@app/contracts';
import {
  resolveEventBusOptions,
  type EventBusOptions,
  type OverflowPolicy,
  type ResolvedEventBusOptions,
} from './bus-options';
import { BusStats, bump } from './bus-stats';
import { DeadlineQueue } from './deadline-queue';
import type { DeliverySink } from './delivery-sink';
import { OrderState } from './order-state';
import { OrderStore, StoreResync } from './order-store';
import { ReplayRing } from './replay-ring';
import { Subscriber, type BusSubscription, type SubscriberHost } from './subscriber';

/** @default 100 ms: the shortest reconnect delay advised at shutdown (see `endAll`). */
export const MIN_RECONNECT_ADVICE_MS = 100;

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
  /**
   * Epoch ms at which the stream ends with `token_expired` (the subscriber's token
   * expires then). Omitted: no such limit.
   */
  expiresAtMs?: number;
}

/** What a resuming subscriber is handed before live events (see `OrderEventBus.replay`). */
interface Replay {
  readonly backlog: StreamItem[];
  /** The last seq the backlog covers. */
  readonly cursor: number;
  /** The order is known to be finished at `cursor`. */
  readonly finished?: boolean;
}

/** One order's slice of the bus: its replay ring, its current state and its subscribers. */
interface OrderChannel {
  readonly ring: ReplayRing;
  readonly subscribers: Set<Subscriber>;
  /**
   * `subscribers` as an array, for the fan-out: built at the first event after the set
   * changed and reused for every event until the next change, so an event costs no
   * iterator, and an order with many subscribers no copy of them, per event.
   */
  fanout?: readonly Subscriber[];
  /** The order's state as far as this instance has applied it (built only when read). */
  readonly state: OrderState;
  /** Runs while the channel has no subscribers: it goes when this fires. */
  evictTimer?: NodeJS.Timeout;
  /**
   * With a routing store: resolves once the store's feed carries this order's events;
   * every open awaits it before reading the snapshot and history.
   */
  readonly watching: Promise<void> | undefined;
  /** The store could not subscribe: the channel is dropped with its last subscriber. */
  watchFailed?: boolean;
  /**
   * Set while the channel is being repaired from the store (a backfill or a resync):
   * live events that arrive meanwhile wait here, so subscribers still get them in order.
   */
  held?: OrderEvent[];
  /**
   * A store resync that came while a repair was already running. That repair's reads may
   * have been answered before the events the feed missed were written, so it cannot stand
   * in for this one: the repair runs again before the held events are released.
   */
  resyncPending?: StoreResync;
}

/**
 * The one event bus. It feeds from the store's event stream and fans each event out to
 * that order's subscribers only: channels are indexed by order id, so publishing costs
 * O(subscribers of the order), never O(all subscribers).
 *
 * A channel exists while the order has local subscribers, and `channelIdleMs` after the
 * last one left (or, with an in-process store that sends every order, after its last
 * event with nobody following it); the store holds the history. With a routing store
 * (`watch`/`unwatch`, the Redis store) the instance does not even receive other orders'
 * events: memory and ingest grow with this instance's subscribers, not with the orders
 * in the system.
 */
export class OrderEventBus {
  readonly stats = new BusStats();
  readonly options: ResolvedEventBusOptions;
  /**
   * Deadlines on one timer: every subscription's max age or token expiry, and every held
   * long-poll's wait (a timer per connection would be idle memory per connection).
   */
  readonly deadlines = new DeadlineQueue();
  private readonly channels = new Map<string, OrderChannel>();
  /** What every subscriber of this bus shares. */
  private readonly host: SubscriberHost = {
    stats: this.stats,
    deadlines: this.deadlines,
    release: (s) => this.release(s.orderId, s),
  };
  private feed?: Subscription;
  private resyncFeed?: Subscription;
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
    this.resyncFeed ??= this.store.resync$?.subscribe((r) => this.resync(r));
  }

  /** Stops consuming and ends every subscription with `reason`. */
  stop(reason: StreamEndReason = StreamEndReason.Shutdown): void {
    this.feed?.unsubscribe();
    this.feed = undefined;
    this.resyncFeed?.unsubscribe();
    this.resyncFeed = undefined;
    this.endAll(reason);
    for (const [orderId, ch] of this.channels) this.forget(orderId, ch);
  }

  /**
   * Ends every open subscription (graceful shutdown tells clients to resume elsewhere).
   * With `reconnectJitterMs`, each subscription is advised its own reconnect delay,
   * uniform in [MIN_RECONNECT_ADVICE_MS, MIN_RECONNECT_ADVICE_MS + reconnectJitterMs), so
   * the clients of a restarting instance do not all come back in the same instant.
   */
  endAll(reason: StreamEndReason, opts: { reconnectJitterMs?: number } = {}): void {
    const jitterMs = opts.reconnectJitterMs;
    for (const ch of this.channels.values()) {
      for (const s of [...ch.subscribers]) {
        const advice =
          jitterMs === undefined
            ? undefined
            : MIN_RECONNECT_ADVICE_MS + Math.floor(Math.random() * jitterMs);
        s.end(reason, advice);
      }
    }
  }

  /**
   * Items waiting in subscriber queues (replay backlog plus live queue), by transport.
   * O(all subscribers): for a metrics scrape, never for the hot path.
   */
  pendingByTransport(): Map<string, number> {
    const out = new Map<string, number>();
    for (const ch of this.channels.values()) {
      for (const s of ch.subscribers) bump(out, s.transport, s.pending);
    }
    return out;
  }

  subscriberCount(orderId?: string): number {
    if (orderId === undefined) return this.total;
    return this.channels.get(orderId)?.subscribers.size ?? 0;
  }

  get orderCount(): number {
    return this.channels.size;
  }

  /**
   * Feeds one published event to the ring and to the order's subscribers. A seq that
   * skips ahead of what this instance has seen means its feed lost messages (a shared
   * store's notifications are at-most-once, e.g. during a reconnect): for an order with
   * subscribers the missing events are first read from the store's history, and later
   * live events of that order wait behind them, so nobody sees a gap that history can fill.
   */
  ingest(event: OrderEvent): void {
    let ch = this.channels.get(event.orderId);
    if (ch === undefined) {
      if (this.store.watch !== undefined) {
        // A routing store only sends watched orders: this message crossed an unsubscribe.
        this.stats.eventsNotServed++;
        return;
      }
      // An in-process store sends every order: its channel is kept warm like one whose
      // last subscriber just left, then goes (the store keeps the history).
      ch = this.channel(event.orderId);
      this.evictWhenIdle(event.orderId, ch);
    }
    if (ch.held !== undefined) {
      ch.held.push(event);
      return;
    }
    const lastSeq = ch.state.lastSeq;
    if (event.seq > lastSeq + 1 && ch.state.known && ch.subscribers.size > 0) {
      ch.held = [event];
      void this.repair(event.orderId, ch, () => this.backfill(event.orderId, ch));
      return;
    }
    this.apply(ch, event);
  }

  /** Applies one event in feed order: dedupe, ring, snapshot, fan-out. */
  private apply(ch: OrderChannel, event: OrderEvent): void {
    const lastSeq = ch.state.lastSeq;
    if (event.seq <= lastSeq) {
      this.stats.duplicatesIgnored++;
      return;
    }
    // The ring must stay contiguous: after a gap it restarts at this event.
    if (ch.ring.size > 0 && event.seq !== lastSeq + 1) ch.ring.clear();
    ch.ring.push(event);
    ch.state.apply(event);
    this.stats.eventsIngested++;
    // The array is fixed while it is iterated: a subscriber that leaves mid-loop (offerLive
    // may end it) is closed and ignores the event; one that joins mid-loop is not offered
    // it, which would be harmless anyway (a joiner is still replaying, and its replay
    // covers this event).
    const fanout = (ch.fanout ??= [...ch.subscribers]);
    for (let i = 0; i < fanout.length; i++) fanout[i].offerLive(event);
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
    clearTimeout(ch.evictTimer);
    ch.evictTimer = undefined;
    const transport = opts.transport ?? 'internal';
    const sub = new Subscriber(
      orderId,
      transport,
      sink,
      opts.queueCapacity ?? this.options.queueCapacity,
      opts.overflowPolicy ?? this.options.overflowPolicy,
      this.host,
    );
    // Register before reading anything: live events published while the replay is
    // read are parked in the subscriber and reconciled by seq in startLive().
    ch.subscribers.add(sub);
    ch.fanout = undefined;
    this.total++;
    bump(this.stats.subscriptionsByTransport, transport, 1);
    if (afterSeq > 0) this.stats.resumes++;
    try {
      if (ch.watching !== undefined) {
        await ch.watching.catch((err: unknown) => {
          ch.watchFailed = true;
          throw err;
        });
      }
      const opened = ch.state.known ? ch.state : await this.readOpening(orderId, ch);
      // As of the open: the live state may be replaced while the replay reads the store.
      const openedSeq = opened.lastSeq;
      const openedStatus = opened.status;
      const { backlog, cursor, finished } = await this.replay(ch, orderId, afterSeq, opened);
      // Judge completion by the newest state: events ingested while the replay was read
      // may have finished the order (and a reset then already covers the terminal event).
      // A shared store's history can also run ahead of its feed: when the replay itself
      // ends with the terminal event, the feed's copy arrives later as a duplicate that
      // is skipped, so the replay must say "finished" on its own.
      const status = ch.state.status ?? openedStatus;
      const lastSeq = ch.state.known ? ch.state.lastSeq : openedSeq;
      const last = backlog.at(-1);
      const terminal =
        finished === true ||
        (status !== undefined && isTerminalStatus(status) && cursor >= lastSeq) ||
        (last?.kind === 'event' &&
          last.event.seq === cursor &&
          isTerminalStatus(last.event.status));
      sub.startLive(backlog, cursor, terminal);
      const maxAgeMs = opts.maxAgeMs ?? this.defaultMaxAgeMs();
      if (maxAgeMs > 0) sub.expireAfter(maxAgeMs);
      if (opts.expiresAtMs !== undefined) sub.expireAt(opts.expiresAtMs);
      return sub;
    } catch (err) {
      sub.close();
      throw err;
    }
  }

  /**
   * The store's feed came back after an interruption. Orders without subscribers are
   * simply forgotten (the next subscription reads them from the store afresh); orders
   * with subscribers are repaired: caught up from history, or reset when the store lost
   * its data. Every channel holds its live events from now until its repair is done.
   */
  private resync(kind: StoreResync): void {
    this.stats.storeResyncs++;
    if (kind === StoreResync.DataLost) this.stats.storeDataLost++;
    for (const [orderId, ch] of [...this.channels]) {
      if (ch.held !== undefined) {
        // A loss outweighs a catch-up: the repair that follows must reset.
        if (ch.resyncPending !== StoreResync.DataLost) ch.resyncPending = kind;
        continue;
      }
      if (ch.subscribers.size === 0) {
        this.forget(orderId, ch);
        continue;
      }
      ch.held = [];
      void this.repair(orderId, ch, () => this.resyncWork(orderId, ch, kind));
    }
  }

  /** One channel's repair after a store resync: catch up, or reset after a data loss. */
  private resyncWork(orderId: string, ch: OrderChannel, kind: StoreResync): Promise<void> {
    if (kind === StoreResync.DataLost) {
      ch.ring.clear();
      return this.resetFromStore(orderId, ch);
    }
    return this.catchUp(orderId, ch);
  }

  /**
   * Runs one repair of a held channel, and again while store resyncs came during the
   * last run (they coalesce), then releases the live events held meanwhile (applied without another
   * repair: a gap still left is reported to subscribers as a Gap reset rather than
   * retried forever).
   */
  private async repair(
    orderId: string,
    ch: OrderChannel,
    work: () => Promise<void>,
  ): Promise<void> {
    for (let next: (() => Promise<void>) | undefined = work; next !== undefined;) {
      try {
        await next();
      } catch {
        // The store is unreachable again: what is held goes out as it is (a gap becomes
        // an explicit reset), and the next resync repairs what is still missing.
      }
      if (this.channels.get(orderId) !== ch) return; // stopped or evicted meanwhile
      const kind = ch.resyncPending;
      ch.resyncPending = undefined;
      next = kind === undefined ? undefined : () => this.resyncWork(orderId, ch, kind);
    }
    const held = ch.held ?? [];
    ch.held = undefined;
    for (const e of held) this.apply(ch, e);
  }

  /** Applies the store's history after this channel's last seq. */
  private async backfill(orderId: string, ch: OrderChannel): Promise<void> {
    this.stats.backfills++;
    const events = await this.store.readHistory(orderId, ch.state.lastSeq);
    if (this.channels.get(orderId) !== ch || events === undefined) return;
    const before = this.stats.eventsIngested;
    for (const e of events) this.apply(ch, e);
    this.stats.eventsBackfilled += this.stats.eventsIngested - before;
  }

  /**
   * After a reconnect that kept the store's data: backfill, unless this order lost it.
   * The store may also hold other events under seqs this instance delivered: a Redis
   * Cluster master that failed over loses writes it had acknowledged (and published)
   * before its replica got them, and the new master hands those seqs to new events. The
   * seq alone cannot tell, the event's publish time can: one history read from this
   * instance's last seq both checks it and carries what was missed.
   */
  private async catchUp(orderId: string, ch: OrderChannel): Promise<void> {
    const stored = await this.store.getSnapshot(orderId);
    if (this.channels.get(orderId) !== ch) return;
    const local = ch.state.lastSeq;
    // Behind what this instance already delivered: the order's data is gone (a cluster
    // node that restarted empty), even though the store as a whole kept its epoch.
    if (stored === undefined ? local > 0 : stored.lastSeq < local) {
      this.resetChannel(ch, stored);
      return;
    }
    if (stored === undefined) return;
    const mine = ch.ring.last();
    if (mine === undefined || mine.seq !== local) {
      if (stored.lastSeq > local) await this.backfill(orderId, ch);
      return;
    }
    this.stats.backfills++;
    const events = await this.store.readHistory(orderId, local - 1);
    if (this.channels.get(orderId) !== ch || events === undefined) return;
    if (events[0]?.seq === local && events[0].publishedAtUs !== mine.publishedAtUs) {
      this.resetChannel(ch, stored);
      return;
    }
    const before = this.stats.eventsIngested;
    for (const e of events) this.apply(ch, e);
    this.stats.eventsBackfilled += this.stats.eventsIngested - before;
  }

  private resetChannel(ch: OrderChannel, stored: OrderSnapshot | undefined): void {
    ch.ring.clear();
    this.resetSubscribers(ch, stored);
  }

  /** After the store lost its data: every subscriber is told, with the store's state now. */
  private async resetFromStore(orderId: string, ch: OrderChannel): Promise<void> {
    const stored = await this.store.getSnapshot(orderId);
    if (this.channels.get(orderId) !== ch) return;
    this.resetSubscribers(ch, stored);
  }

  /**
   * Replaces every subscriber's view with `stored` (a Gap reset). When the store no
   * longer knows the order, the reset carries the last known state with lastSeq 0: seqs
   * start again at 1 if the order is published anew, and the client is told so.
   */
  private resetSubscribers(ch: OrderChannel, stored: OrderSnapshot | undefined): void {
    const previous = ch.state.snapshot();
    ch.state.replace(stored);
    const snapshot = stored ?? (previous ? { ...previous, lastSeq: 0 } : undefined);
    if (snapshot === undefined) return;
    for (const s of [...ch.subscribers]) s.resetTo(ResetReason.Gap, snapshot);
  }

  private defaultMaxAgeMs(): number {
    const { maxStreamAgeMs, maxStreamAgeJitterMs } = this.options;
    if (maxStreamAgeMs <= 0) return 0;
    return maxStreamAgeMs + Math.floor(Math.random() * maxStreamAgeJitterMs);
  }

  /** The order's current state (from the bus when it has it, else from the store). */
  async getSnapshot(orderId: string): Promise<OrderSnapshot | undefined> {
    return this.channels.get(orderId)?.state.snapshot() ?? this.store.getSnapshot(orderId);
  }

  /**
   * The order as an open sees it when this bus does not know it yet: the store's
   * snapshot, which also becomes the channel's state unless an event got there first.
   * The view returned is the store's answer either way (fixed, not the live state).
   * @throws GatewayError NotFound for an order the store does not have.
   */
  private async readOpening(orderId: string, ch: OrderChannel): Promise<OrderState> {
    const stored = await this.store.getSnapshot(orderId);
    if (stored === undefined) {
      throw new GatewayError(ErrorCode.NotFound, `order ${orderId} not found`);
    }
    if (!ch.state.known) ch.state.replace(stored);
    return new OrderState(stored);
  }

  /**
   * What a client resuming after `afterSeq` missed: events, or one reset. `finished`:
   * the order is known to be finished at `cursor` even though this instance's feed has
   * not delivered its terminal event yet.
   *
   * `opened` is read for its seq; its snapshot is built only when a reset needs it. A
   * long-poll opens a subscription per answer, each after a new event: a snapshot built
   * for every open (and the store's for the owner check) was work for nothing on every
   * poll.
   */
  private async replay(
    ch: OrderChannel,
    orderId: string,
    afterSeq: number,
    opened: OrderState,
  ): Promise<Replay> {
    if (afterSeq > opened.lastSeq) {
      return this.replayAhead(orderId, afterSeq, snapshotOf(opened));
    }
    if (afterSeq === opened.lastSeq) return { backlog: [], cursor: afterSeq };
    const recent = ch.ring.after(afterSeq, nowUs());
    if (recent !== undefined) {
      return (
        this.replayEvents(recent, afterSeq) ??
        this.reset(ResetReason.BeyondRetention, ch.state.snapshot() ?? snapshotOf(opened))
      );
    }
    // The state may be replaced (a store resync) while the history is read.
    const atOpen = snapshotOf(opened);
    const events = await this.store.readHistory(orderId, afterSeq);
    return (
      this.replayEvents(events, afterSeq) ??
      this.reset(ResetReason.BeyondRetention, ch.state.snapshot() ?? atOpen)
    );
  }

  /**
   * A resume point ahead of what this instance has seen. With a shared store the client
   * may have seen it on another instance whose feed is ahead of this one's (pub/sub
   * delivers to each instance on its own schedule): the store, not this feed, tells
   * whether the seq exists. Only a seq the store has not reached either gets a reset.
   */
  private async replayAhead(
    orderId: string,
    afterSeq: number,
    local: OrderSnapshot,
  ): Promise<Replay> {
    const stored = await this.store.getSnapshot(orderId);
    if (stored === undefined || stored.lastSeq < afterSeq) {
      return this.reset(ResetReason.AheadOfLastSeq, stored ?? local);
    }
    if (stored.lastSeq === afterSeq) {
      // Later copies from this feed are at or below the cursor and skipped as duplicates,
      // so a terminal status here must finish the stream now.
      return { backlog: [], cursor: afterSeq, finished: isTerminalStatus(stored.status) };
    }
    const events = await this.store.readHistory(orderId, afterSeq);
    return this.replayEvents(events, afterSeq) ?? this.reset(ResetReason.BeyondRetention, stored);
  }

  /** The events after `afterSeq`; undefined when they do not follow it (a reset is due). */
  private replayEvents(
    events: readonly OrderEvent[] | undefined,
    afterSeq: number,
  ): Replay | undefined {
    if (events === undefined || events.length === 0 || events[0].seq !== afterSeq + 1) {
      return undefined;
    }
    this.stats.eventsReplayed += events.length;
    return {
      backlog: events.map(itemOf),
      cursor: events[events.length - 1].seq,
    };
  }

  private reset(reason: ResetReason, snapshot: OrderSnapshot): Replay {
    this.stats.resets[reason]++;
    return { backlog: [{ kind: 'reset', reset: { reason, snapshot } }], cursor: snapshot.lastSeq };
  }

  private channel(orderId: string): OrderChannel {
    let ch = this.channels.get(orderId);
    if (ch === undefined) {
      ch = {
        ring: new ReplayRing(this.options.ringSize, this.options.ringMaxAgeMs),
        subscribers: new Set(),
        state: new OrderState(),
        watching: this.store.watch?.(orderId),
      };
      // Handled by every open that awaits it; this keeps a rejection nobody awaits quiet.
      ch.watching?.catch(() => {});
      this.channels.set(orderId, ch);
    }
    return ch;
  }

  private release(orderId: string, sub: Subscriber): void {
    const ch = this.channels.get(orderId);
    if (ch?.subscribers.delete(sub)) {
      ch.fanout = undefined;
      this.total--;
      bump(this.stats.subscriptionsByTransport, sub.transport, -1);
    }
    if (ch === undefined || ch.subscribers.size > 0) return;
    // A channel opened for an unknown order, or one the store could not subscribe to,
    // holds nothing worth keeping; any other stays warm for a while.
    if (!ch.state.known || ch.watchFailed === true || this.options.channelIdleMs === 0) {
      this.forget(orderId, ch);
      return;
    }
    this.evictWhenIdle(orderId, ch);
  }

  /** The channel goes after `channelIdleMs` unless a subscriber arrives (open() stops it). */
  private evictWhenIdle(orderId: string, ch: OrderChannel): void {
    clearTimeout(ch.evictTimer);
    ch.evictTimer = setTimeout(() => {
      if (this.channels.get(orderId) === ch && ch.subscribers.size === 0) this.forget(orderId, ch);
    }, this.options.channelIdleMs);
    ch.evictTimer.unref();
  }

  /** Drops a channel and, with a routing store, its subscription. */
  private forget(orderId: string, ch: OrderChannel): void {
    clearTimeout(ch.evictTimer);
    if (this.channels.get(orderId) !== ch) return;
    this.channels.delete(orderId);
    this.store.unwatch?.(orderId);
  }
}

/** The snapshot of a state known to hold one (the opening view of an order that exists). */
function snapshotOf(state: OrderState): OrderSnapshot {
  const snapshot = state.snapshot();
  if (snapshot === undefined) throw new Error('an opened order has no state');
  return snapshot;
}
