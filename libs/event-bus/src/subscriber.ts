import {
  domainItem,
  eventOf,
  isReset,
  isSkipped,
  ResetReason,
  StreamEndReason,
  type DomainEvent,
  type DomainSnapshot,
  type ResetItem,
  type StreamDomain,
  type StreamItemOf,
} from '@app/contracts';
import { BoundedQueue, type StateSource } from './bounded-queue';
import type { OverflowPolicy } from './bus-options';
import type { BusStats, DeliveryCounter } from './bus-stats';
import type { DeadlineEntry, DeadlineQueue } from './deadline-queue';
import type { DeliverySink } from './delivery-sink';
import type { DeliveryTrace } from './delivery-tracer';
import type { StreamState } from './stream-state';

/** The handle a transport keeps for one subscription; `close()` releases it. */
export interface BusSubscription {
  readonly orderId: string;
  /** Items waiting for the transport (replay backlog plus live queue). */
  readonly pending: number;
  /** Releases the subscription; idempotent. The sink is not called again. */
  close(): void;
  /**
   * Ends the subscription from the service side: the sink's `end(reason)` is called
   * (once), unlike `close()`. Idempotent; a no-op after `close()`.
   */
  end(reason: StreamEndReason): void;
}

/** What subscribers need of the bus that made them: one object per bus, shared by all. */
export interface SubscriberHost<E extends DomainEvent, S extends DomainSnapshot> {
  /** The terminal rule and the fold of the events this bus carries. */
  readonly domain: StreamDomain<E, S>;
  readonly stats: BusStats;
  /** Max-age and token-expiry deadlines of every subscription, on one timer. */
  readonly deadlines: DeadlineQueue;
  /** Takes a subscriber that closed or ended off its order's channel. */
  release(s: Subscriber<E, S>): void;
  /**
   * The trace of the event being fanned out right now, set by the bus for a traced event
   * only: untraced deliveries pay one property read.
   */
  delivering: DeliveryTrace<E> | undefined;
}

/** The backlog of a subscriber that has none: one shared empty array. */
const NO_ITEMS: readonly never[] = Object.freeze([]);

/**
 * One subscription: a replay backlog (what the client missed, never dropped, at most a
 * ring's worth), then a bounded live queue, pumped into the transport's sink only while
 * the sink accepts writes.
 *
 * Gap and duplicate freedom rest on one number, `cursor`: the last seq accepted for this
 * client. Live events at or below it are duplicates and ignored; an event above
 * `cursor + 1` means events were lost upstream and the client gets an explicit reset.
 * What the live queue drops on overflow stays explicit too (a `skipped` range in its
 * place, see BoundedQueue), so the items a client receives always chain: each starts
 * right after the previous one's `cursorAfter`.
 * While the replay is being read (`replaying`), live events are parked in the queue and
 * trimmed against the replay when it arrives, which closes the replay/live race.
 */
export class Subscriber<E extends DomainEvent, S extends DomainSnapshot>
  implements BusSubscription, DeadlineEntry, StateSource<E, S>
{
  private cursor = 0;
  private replaying = true;
  private backlog: readonly StreamItemOf<E, S>[] = NO_ITEMS;
  private backlogIndex = 0;
  private waitingForDrain = false;
  private completing = false;
  private closed = false;
  /** Epoch ms of the `max_age` end (Infinity: none). */
  private maxAgeAtMs = Infinity;
  /** Epoch ms of the `token_expired` end (Infinity: none). */
  private tokenExpiresAtMs = Infinity;
  /**
   * Whichever of the two ends comes first is this subscription's one deadline in the
   * bus's DeadlineQueue (no timer of its own: every timer is idle memory per
   * connection). Both fields are the queue's.
   */
  deadlineSlot = -1;
  deadlineAtMs = Infinity;
  private readonly queue: BoundedQueue<E, S>;
  private readonly stats: BusStats;
  private readonly delivered: DeliveryCounter;

  constructor(
    readonly orderId: string,
    readonly transport: string,
    private readonly sink: DeliverySink<E, S>,
    capacity: number,
    private readonly policy: OverflowPolicy,
    private readonly host: SubscriberHost<E, S>,
    /** The channel's state of the order (shared by its subscribers), read when a reset is built. */
    private readonly state: StreamState<E, S>,
  ) {
    this.queue = new BoundedQueue(capacity, policy, host.domain, this);
    this.stats = host.stats;
    this.delivered = host.stats.deliveryCounter(transport);
  }

  private itemOf(event: E): StreamItemOf<E, S> {
    return domainItem(this.host.domain, event);
  }

  /**
   * The stream's whole state as of `event`, for a reset this subscriber builds (a gap, a
   * folded queue): the channel's, which the bus applies each event to before it offers it,
   * so every kind's newest event and the owner are in it, and the fold runs only when a
   * reset is built. Only a state already past `event` (an event published from inside a
   * delivery, offered before this one) falls back to `event` alone, so the items still chain.
   */
  stateAt(event: E): S {
    const state = this.state.snapshot();
    if (state !== undefined && state.lastSeq === event.seq) return state;
    return this.host.domain.fold(undefined, event, this.state.ownerId);
  }

  get pending(): number {
    return this.backlog.length - this.backlogIndex + this.queue.length;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Called by the bus for every live event of this order (of every kind), in seq order. */
  offerLive(event: E): void {
    if (this.closed) return;
    if (this.replaying) {
      this.enqueue(this.itemOf(event));
      return;
    }
    if (event.seq <= this.cursor) return;
    if (event.seq > this.cursor + 1) {
      // Events between cursor and this one never reached this process: say so.
      this.stats.resets[ResetReason.Gap]++;
      this.enqueue({
        kind: 'reset',
        reset: { reason: ResetReason.Gap, snapshot: this.stateAt(event) },
      });
    } else if (this.pending === 0 && !this.waitingForDrain) {
      // The common case at load: nothing waits ahead of this event, so it goes to the
      // sink without a trip through the queue (a push and a shift that re-grow the
      // queue's array for every event).
      this.cursor = event.seq;
      if (this.host.domain.isTerminal(event)) this.completing = true;
      if (this.deliver(this.itemOf(event), true) && this.completing)
        this.end(StreamEndReason.Completed);
      return;
    } else {
      this.enqueue(this.itemOf(event));
    }
    this.cursor = event.seq;
    if (this.host.domain.isTerminal(event)) this.completing = true;
    this.pump();
  }

  /**
   * Replaces the client's view with `snapshot` (the store lost or rewrote history): an
   * explicit reset, after which seqs are counted from `snapshot.lastSeq` again, even if
   * that is lower than before. A subscriber still reading its replay has nothing
   * consistent to reconcile with, so it is ended with `max_age` and resumes afresh.
   */
  resetTo(reason: ResetReason, snapshot: S): void {
    if (this.closed) return;
    if (this.replaying) {
      this.end(StreamEndReason.MaxAge);
      return;
    }
    this.stats.resets[reason]++;
    this.enqueue({ kind: 'reset', reset: { reason, snapshot } });
    this.cursor = snapshot.lastSeq;
    this.completing = snapshot.lastSeq > 0 && this.host.domain.isTerminalSnapshot(snapshot);
    this.pump();
  }

  /**
   * Ends the replay phase: `backlog` is what the client missed (events, or one reset),
   * `cursor` the last seq it covers, `terminal` whether the order is finished at `cursor`.
   */
  startLive(backlog: StreamItemOf<E, S>[], cursor: number, terminal: boolean): void {
    if (this.closed) return;
    this.backlog = backlog;
    this.cursor = cursor;
    this.completing = terminal;
    // Live items parked during the replay: drop what the backlog already covers.
    this.queue.removeUpTo(cursor);
    const lastQueued = this.queue.lastSeq();
    if (lastQueued !== undefined && lastQueued > this.cursor) {
      this.cursor = lastQueued;
      this.completing ||= this.queue.hasTerminal();
    }
    this.replaying = false;
    this.pump();
  }

  /**
   * Ends the subscription with `max_age` after `ms`, so long-lived streams are spread
   * over instances again as load balancers see reconnects; clients resume from their
   * last seq and lose nothing. A later call replaces the earlier max age.
   */
  expireAfter(ms: number): void {
    if (this.closed) return;
    this.maxAgeAtMs = Date.now() + ms;
    this.armDeadline();
  }

  /**
   * Ends the subscription with `token_expired` at `atMs` (epoch ms): the caller's
   * credentials stop being valid then, and a stream must not outlive them. The client
   * resumes with a fresh token from its last seq. A later call replaces the earlier
   * expiry.
   */
  expireAt(atMs: number): void {
    if (this.closed) return;
    this.tokenExpiresAtMs = atMs;
    this.armDeadline();
  }

  /** (Re)sets the one deadline: the earlier of the max age and the token expiry. */
  private armDeadline(): void {
    const atMs = Math.min(this.maxAgeAtMs, this.tokenExpiresAtMs);
    if (atMs === Infinity) this.host.deadlines.cancel(this);
    else this.host.deadlines.schedule(this, atMs);
  }

  /** Called by the deadline queue. */
  onDeadline(): void {
    if (this.closed) return;
    const now = Date.now();
    // The token is checked first: a stream whose credentials have lapsed ends as
    // token_expired even when its max age is due in the same instant.
    if (this.tokenExpiresAtMs <= now) this.end(StreamEndReason.TokenExpired);
    else if (this.maxAgeAtMs <= now) this.end(StreamEndReason.MaxAge);
    else this.armDeadline();
  }

  /**
   * Ends the subscription from the service side and tells the transport why, with the
   * reconnect delay to advise the client when the service has one (graceful shutdown).
   */
  end(reason: StreamEndReason, retryAfterMs?: number): void {
    if (this.closed) return;
    this.closed = true;
    this.host.deadlines.cancel(this);
    this.host.release(this);
    this.sink.end(reason, retryAfterMs);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.host.deadlines.cancel(this);
    this.host.release(this);
  }

  private enqueue(item: StreamItemOf<E, S>): void {
    const result = this.queue.offer(item);
    if (!result.accepted) {
      this.stats.overflows[this.policy]++;
      this.stats.overflowDropped[this.policy] += this.queue.length;
      this.end(StreamEndReason.Overflow);
      return;
    }
    if (result.dropped > 0) {
      this.stats.overflows[this.policy]++;
      this.stats.overflowDropped[this.policy] += result.dropped;
    }
  }

  private next(): StreamItemOf<E, S> | undefined {
    if (this.backlogIndex < this.backlog.length) {
      const item = this.backlog[this.backlogIndex++];
      if (this.backlogIndex === this.backlog.length) {
        this.backlog = NO_ITEMS;
        this.backlogIndex = 0;
      }
      return item;
    }
    return this.queue.shift();
  }

  private pump(): void {
    if (this.replaying || this.waitingForDrain) return;
    for (;;) {
      if (this.closed) return;
      const live = this.backlogIndex >= this.backlog.length;
      let item = this.next();
      if (item === undefined) break;
      if (isReset(item)) item = this.owned(item);
      if (!this.deliver(item, live)) return;
    }
    if (this.completing) this.end(StreamEndReason.Completed);
  }

  /**
   * `reset` with the stream's owner when its snapshot was built before the bus had learned
   * it (a queue folded while the open was still asking the store): completed as it is
   * written, so every reset equals the store's read. Resets only, which are rare.
   */
  private owned(reset: ResetItem<S>): ResetItem<S> {
    const snapshot = reset.reset.snapshot;
    const ownerId = this.state.ownerId;
    if (snapshot.ownerId !== undefined || ownerId === undefined) return reset;
    return { kind: 'reset', reset: { ...reset.reset, snapshot: { ...snapshot, ownerId } } };
  }

  /**
   * Writes one item to the sink and counts it (`live`: not from the replay backlog, so
   * its latency is recorded). False when the subscription closed meanwhile or the sink
   * asked to wait for its drain, which then pumps again.
   */
  private deliver(item: StreamItemOf<E, S>, live: boolean): boolean {
    this.stats.itemsDelivered++;
    this.delivered.count++;
    const accepted = this.sink.write(item);
    const event = live ? eventOf(item) : undefined;
    if (event !== undefined) {
      this.stats.onDeliver?.(this.transport, event.publishedAtUs);
      this.host.delivering?.written(this.transport, event);
    } else if (isSkipped(item)) {
      const { fromSeq, toSeq } = item.skipped;
      this.stats.countSkipped(this.transport, this.policy, toSeq - fromSeq + 1);
    } else if (isReset(item) && item.reset.reason === ResetReason.Overflow) {
      // Counted when delivered: the queue may fold several into one before that.
      this.stats.resets[ResetReason.Overflow]++;
    }
    if (accepted) return !this.closed;
    if (this.closed) return false;
    this.waitingForDrain = true;
    this.sink.onDrain(() => {
      this.waitingForDrain = false;
      this.pump();
    });
    return false;
  }
}
