import type { Subscription } from 'rxjs';
import {
  ErrorCode,
  GatewayError,
  nowUs,
  domainItem,
  ResetReason,
  StreamEndReason,
  type DomainEvent,
  type DomainSnapshot,
  eventOf,
  type StreamDomain,
  type StreamItemOf,
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
import type { DeliveryTracer } from './delivery-tracer';
import { StreamState } from './stream-state';
import type { BusStore } from './bus-store';
import type { StreamChannel } from './stream-channel';
import { ReplayRing } from './replay-ring';
import { StoreRepair } from './store-repair';
import { Subscriber, type BusSubscription, type SubscriberHost } from './subscriber';

/** @default 100 ms: the shortest reconnect delay advised at shutdown (see `endAll`). */
export const MIN_RECONNECT_ADVICE_MS = 100;

/**
 * One client's reconnect delay at shutdown, uniform in [MIN_RECONNECT_ADVICE_MS,
 * MIN_RECONNECT_ADVICE_MS + jitterMs), so the clients of a restarting instance do not
 * all come back in the same instant (the streams `endAll` ends and the connections the
 * drain turns away alike).
 */
export function reconnectAdviceMs(jitterMs: number): number {
  return MIN_RECONNECT_ADVICE_MS + Math.floor(Math.random() * jitterMs);
}

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

/** What a resuming subscriber is handed before live events (see `StreamEventBus.replay`). */
interface Replay<E extends DomainEvent, S extends DomainSnapshot> {
  readonly backlog: StreamItemOf<E, S>[];
  /** The last seq the backlog covers. */
  readonly cursor: number;
  /** The order is known to be finished at `cursor`. */
  readonly finished?: boolean;
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
export class StreamEventBus<
  E extends DomainEvent = DomainEvent,
  S extends DomainSnapshot = DomainSnapshot,
> {
  readonly stats = new BusStats();
  readonly options: ResolvedEventBusOptions;
  /**
   * Deadlines on one timer: every subscription's max age or token expiry, and every held
   * long-poll's wait (a timer per connection would be idle memory per connection).
   */
  readonly deadlines = new DeadlineQueue();
  private readonly channels = new Map<string, StreamChannel<E, S>>();
  /** What every subscriber of this bus shares. */
  private readonly host: SubscriberHost<E, S>;
  /** Repairs channels whose feed lost events, from the store. */
  private readonly repairs: StoreRepair<E, S>;
  private readonly tracer: DeliveryTracer<E> | undefined;
  private feed?: Subscription;
  private resyncFeed?: Subscription;
  private total = 0;

  constructor(
    private readonly store: BusStore<E, S>,
    options: EventBusOptions = {},
  ) {
    this.options = resolveEventBusOptions(options);
    this.host = {
      domain: store.domain,
      stats: this.stats,
      deadlines: this.deadlines,
      release: (s) => this.release(s.orderId, s),
      delivering: undefined,
    };
    this.tracer = options.deliveryTracer;
    this.repairs = new StoreRepair(store, this.stats, {
      channels: () => this.channels.entries(),
      isCurrent: (orderId, ch) => this.channels.get(orderId) === ch,
      apply: (ch, event) => this.apply(ch, event),
      forget: (orderId, ch) => this.forget(orderId, ch),
    });
  }

  /** The domain of the events this bus carries (the transports name them by it). */
  get domain(): StreamDomain<E, S> {
    return this.store.domain;
  }

  /** Starts consuming the store's events. Idempotent. */
  start(): void {
    this.feed ??= this.store.events$.subscribe((e) => this.ingest(e));
    this.resyncFeed ??= this.store.resync$?.subscribe((r) => this.repairs.resync(r));
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
   * With `reconnectJitterMs`, each subscription is advised its own reconnect delay
   * (`reconnectAdviceMs`).
   */
  endAll(reason: StreamEndReason, opts: { reconnectJitterMs?: number } = {}): void {
    const jitterMs = opts.reconnectJitterMs;
    for (const ch of this.channels.values()) {
      for (const s of [...ch.subscribers]) {
        const advice = jitterMs === undefined ? undefined : reconnectAdviceMs(jitterMs);
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
  ingest(event: E): void {
    const ch = this.channels.get(event.orderId);
    if (ch === undefined) {
      if (this.store.watch !== undefined) {
        // A routing store only sends watched orders: this message crossed an unsubscribe.
        this.stats.eventsNotServed++;
        return;
      }
      this.channelFromFeed(event);
      return;
    }
    if (ch.held !== undefined) {
      ch.held.push(event);
      return;
    }
    const lastSeq = ch.state.lastSeq;
    if (event.seq > lastSeq + 1 && ch.state.known && ch.subscribers.size > 0) {
      this.repairs.fillGap(event.orderId, ch, event);
      return;
    }
    this.apply(ch, event);
  }

  /**
   * An event of an order the bus holds no channel for, from an in-process store that sends
   * every order: the channel is kept warm like one whose last subscriber just left, then
   * goes (the store keeps the history). An event after the stream's first makes it again
   * after an eviction, and alone lacks the older kinds and the owner a reset must carry:
   * the state is seeded from the store's, which such a store holds in process.
   */
  private channelFromFeed(event: E): void {
    const ch = this.channel(event.orderId);
    this.evictWhenIdle(event.orderId, ch);
    this.apply(ch, event);
    if (event.seq === 1) return;
    const stored = this.store.getSnapshotSync?.(event.orderId);
    if (stored !== undefined) this.seedFeedState(ch, stored);
  }

  /** Applies one event in feed order: dedupe, ring, snapshot, fan-out. */
  private apply(ch: StreamChannel<E, S>, event: E): void {
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
    const trace =
      this.tracer !== undefined && fanout.length > 0
        ? this.tracer.begin(event, this.store.traceContextOf?.(event))
        : undefined;
    if (trace === undefined) {
      for (let i = 0; i < fanout.length; i++) fanout[i].offerLive(event);
      return;
    }
    this.host.delivering = trace;
    try {
      for (let i = 0; i < fanout.length; i++) fanout[i].offerLive(event);
    } finally {
      this.host.delivering = undefined;
      trace.end(fanout.length);
    }
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
    sink: DeliverySink<E, S>,
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
      ch.state,
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
      const opened =
        ch.state.known && ch.reading === undefined ? ch.state : await this.readOpening(orderId, ch);
      // A reset the subscriber builds itself later (a gap, a folded queue) is built
      // synchronously from the channel's state, so that state must know the owner before
      // the subscriber goes live; asked beside the replay, which it does not delay. A failed
      // read only leaves it unknown: the next open or reset asks again.
      const owning = ch.state.ownerKnown ? undefined : this.learnOwner(ch, orderId).catch(() => {});
      // As of the open: the live state may be replaced while the replay reads the store.
      const openedSeq = opened.lastSeq;
      const openedTerminal = opened.terminal;
      const { backlog, cursor, finished } = await this.replay(ch, orderId, afterSeq, opened);
      if (owning !== undefined) await owning;
      // Judge completion by the newest state: events ingested while the replay was read
      // may have finished the order (and a reset then already covers the terminal event).
      // A shared store's history can also run ahead of its feed: when the replay itself
      // ends with the terminal event, the feed's copy arrives later as a duplicate that
      // is skipped, so the replay must say "finished" on its own.
      const stateTerminal = ch.state.terminal ?? openedTerminal;
      const lastSeq = ch.state.known ? ch.state.lastSeq : openedSeq;
      const last = backlog.at(-1);
      const lastEvent = last === undefined ? undefined : eventOf(last);
      const terminal =
        finished === true ||
        (stateTerminal === true && cursor >= lastSeq) ||
        (lastEvent !== undefined &&
          lastEvent.seq === cursor &&
          this.store.domain.isTerminal(lastEvent));
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

  private defaultMaxAgeMs(): number {
    const { maxStreamAgeMs, maxStreamAgeJitterMs } = this.options;
    if (maxStreamAgeMs <= 0) return 0;
    return maxStreamAgeMs + Math.floor(Math.random() * maxStreamAgeJitterMs);
  }

  /** The order's current state (from the bus when it has it, else from the store). */
  async getSnapshot(orderId: string): Promise<S | undefined> {
    return this.channels.get(orderId)?.state.snapshot() ?? this.store.getSnapshot(orderId);
  }

  /**
   * The order as an open sees it when this bus does not know it yet: the store's
   * snapshot, which also becomes the channel's state unless an event got there first.
   * Opens that come while it is read share the one read.
   * The view returned is the store's answer either way (fixed, not the live state).
   * @throws GatewayError NotFound for an order the store does not have.
   */
  private async readOpening(orderId: string, ch: StreamChannel<E, S>): Promise<StreamState<E, S>> {
    const stored = await (ch.reading ??= this.store.getSnapshot(orderId).finally(() => {
      ch.reading = undefined;
    }));
    if (stored === undefined) {
      throw new GatewayError(ErrorCode.NotFound, `order ${orderId} not found`);
    }
    if (!ch.state.known) ch.state.replace(stored);
    else if (!ch.state.ownerKnown) this.seedFeedState(ch, stored);
    return new StreamState(this.store.domain, stored);
  }

  /**
   * The feed's events alone made the state known (they got there first while the store
   * was read, or made the channel again after its eviction), without the other kinds
   * before them and without the owner, and a reset built from it would lack them. The
   * store's snapshot plus the ring's events after it is the whole state. A snapshot ahead
   * of the feed (a shared store answers before its feed delivers) completes the state once
   * the feed reaches it: taken now, the feed's copies of the events before it would be
   * skipped as duplicates, and a live subscriber's cursor follows the feed. One the ring
   * does not reach back to leaves the state as the feed made it.
   */
  private seedFeedState(ch: StreamChannel<E, S>, stored: S): void {
    if (stored.lastSeq > ch.state.lastSeq) {
      ch.state.seedAhead(stored);
      return;
    }
    const newer = ch.ring.after(stored.lastSeq, nowUs());
    if (newer === undefined) return;
    ch.state.replace(stored);
    for (const e of newer) ch.state.apply(e);
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
    ch: StreamChannel<E, S>,
    orderId: string,
    afterSeq: number,
    opened: StreamState<E, S>,
  ): Promise<Replay<E, S>> {
    if (afterSeq > opened.lastSeq) {
      return this.replayAhead(ch, orderId, afterSeq, snapshotOf(opened));
    }
    if (afterSeq === opened.lastSeq) return { backlog: [], cursor: afterSeq };
    const recent = ch.ring.after(afterSeq, nowUs());
    if (recent !== undefined) {
      return (
        this.replayEvents(recent, afterSeq) ??
        this.reset(ch, orderId, ResetReason.BeyondRetention, newerOf(ch.state, snapshotOf(opened)))
      );
    }
    // The state may be replaced (a store resync) while the history is read.
    const atOpen = snapshotOf(opened);
    const events = await this.store.readHistory(orderId, afterSeq);
    return (
      this.replayEvents(events, afterSeq) ??
      this.reset(ch, orderId, ResetReason.BeyondRetention, newerOf(ch.state, atOpen))
    );
  }

  /**
   * A resume point ahead of what this instance has seen. With a shared store the client
   * may have seen it on another instance whose feed is ahead of this one's (pub/sub
   * delivers to each instance on its own schedule): the store, not this feed, tells
   * whether the seq exists. Only a seq the store has not reached either gets a reset.
   */
  private async replayAhead(
    ch: StreamChannel<E, S>,
    orderId: string,
    afterSeq: number,
    local: S,
  ): Promise<Replay<E, S>> {
    const stored = await this.store.getSnapshot(orderId);
    if (stored === undefined || stored.lastSeq < afterSeq) {
      return this.reset(ch, orderId, ResetReason.AheadOfLastSeq, stored ?? local);
    }
    if (stored.lastSeq === afterSeq) {
      // Later copies from this feed are at or below the cursor and skipped as duplicates,
      // so a terminal status here must finish the stream now.
      return {
        backlog: [],
        cursor: afterSeq,
        finished: this.store.domain.isTerminalSnapshot(stored),
      };
    }
    const events = await this.store.readHistory(orderId, afterSeq);
    return (
      this.replayEvents(events, afterSeq) ??
      this.reset(ch, orderId, ResetReason.BeyondRetention, stored)
    );
  }

  /** The events after `afterSeq`; undefined when they do not follow it (a reset is due). */
  private replayEvents(
    events: readonly E[] | undefined,
    afterSeq: number,
  ): Replay<E, S> | undefined {
    if (events === undefined || events.length === 0 || events[0].seq !== afterSeq + 1) {
      return undefined;
    }
    this.stats.eventsReplayed += events.length;
    return {
      backlog: events.map((e) => domainItem(this.store.domain, e)),
      cursor: events[events.length - 1].seq,
    };
  }

  private async reset(
    ch: StreamChannel<E, S>,
    orderId: string,
    reason: ResetReason,
    snapshot: S,
  ): Promise<Replay<E, S>> {
    const owned = await this.withOwner(ch, orderId, snapshot);
    this.stats.resets[reason]++;
    return {
      backlog: [{ kind: 'reset', reset: { reason, snapshot: owned } }],
      cursor: owned.lastSeq,
    };
  }

  /**
   * `snapshot` with the stream's owner, so a reset equals the store's read whichever path
   * built it (see `learnOwner`).
   */
  private async withOwner(ch: StreamChannel<E, S>, orderId: string, snapshot: S): Promise<S> {
    if (snapshot.ownerId !== undefined) return snapshot;
    if (!ch.state.ownerKnown) await this.learnOwner(ch, orderId);
    const ownerId = ch.state.ownerId;
    return ownerId === undefined ? snapshot : { ...snapshot, ownerId };
  }

  /**
   * Settles the owner of a channel whose state does not know it. The feed's events do not
   * carry the owner, so a state folded from them alone asks the store: once per channel
   * (ownership never changes), at an open or when a reset is built, never per delivery;
   * callers that come while it is asked share the one read.
   */
  private learnOwner(ch: StreamChannel<E, S>, orderId: string): Promise<void> {
    return (ch.owning ??= this.askOwner(ch, orderId).finally(() => {
      ch.owning = undefined;
    }));
  }

  private async askOwner(ch: StreamChannel<E, S>, orderId: string): Promise<void> {
    const ownership = await this.store.getOwnership(orderId);
    // Undefined: the store no longer has the stream, so it says nothing about its owner.
    if (ownership !== undefined && !ch.state.ownerKnown) ch.state.learnOwner(ownership.ownerId);
  }

  private channel(orderId: string): StreamChannel<E, S> {
    let ch = this.channels.get(orderId);
    if (ch === undefined) {
      ch = {
        ring: new ReplayRing(this.options.ringSize, this.options.ringMaxAgeMs),
        subscribers: new Set(),
        state: new StreamState(this.store.domain),
        watching: this.store.watch?.(orderId),
      };
      // Handled by every open that awaits it; this keeps a rejection nobody awaits quiet.
      ch.watching?.catch(() => {});
      this.channels.set(orderId, ch);
    }
    return ch;
  }

  private release(orderId: string, sub: Subscriber<E, S>): void {
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
  private evictWhenIdle(orderId: string, ch: StreamChannel<E, S>): void {
    clearTimeout(ch.evictTimer);
    ch.evictTimer = setTimeout(() => {
      if (this.channels.get(orderId) === ch && ch.subscribers.size === 0) this.forget(orderId, ch);
    }, this.options.channelIdleMs);
    ch.evictTimer.unref();
  }

  /** Drops a channel and, with a routing store, its subscription. */
  private forget(orderId: string, ch: StreamChannel<E, S>): void {
    clearTimeout(ch.evictTimer);
    if (this.channels.get(orderId) !== ch) return;
    this.channels.delete(orderId);
    this.store.unwatch?.(orderId);
  }
}

/**
 * The channel's state, or the store's read at the open when the feed has not reached it
 * yet (a shared store answers before its feed delivers): the state then has only the
 * feed's events, and the read is both newer and whole.
 */
function newerOf<E extends DomainEvent, S extends DomainSnapshot>(
  state: StreamState<E, S>,
  atOpen: S,
): S {
  return (state.lastSeq >= atOpen.lastSeq ? state.snapshot() : undefined) ?? atOpen;
}

/** The snapshot of a state known to hold one (the opening view of an order that exists). */
function snapshotOf<E extends DomainEvent, S extends DomainSnapshot>(state: StreamState<E, S>): S {
  const snapshot = state.snapshot();
  if (snapshot === undefined) throw new Error('an opened order has no state');
  return snapshot;
}
