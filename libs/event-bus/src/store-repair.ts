import { ResetReason, type DomainEvent, type DomainSnapshot } from '@app/contracts';
import { StoreResync } from '@app/store/stream-store';
import type { BusStore } from './bus-store';
import type { BusStats } from './bus-stats';
import type { StreamChannel } from './stream-channel';

/** What a repair needs of the bus: its channels, and applying an event in feed order. */
export interface RepairedBus<E extends DomainEvent, S extends DomainSnapshot> {
  channels(): Iterable<[string, StreamChannel<E, S>]>;
  /** Whether `ch` is still the order's channel (not stopped or evicted meanwhile). */
  isCurrent(orderId: string, ch: StreamChannel<E, S>): boolean;
  /** Applies one event in feed order: dedupe, ring, snapshot, fan-out. */
  apply(ch: StreamChannel<E, S>, event: E): void;
  forget(orderId: string, ch: StreamChannel<E, S>): void;
}

/**
 * Repairs the bus's view of the store when the store's feed lost events (a shared store's
 * pub/sub is at-most-once): backfill from history on a gap, catch up after a reconnect
 * (failover detected by an event's publishedAtUs), reset explicitly after a data loss.
 * While a channel is repaired its live events are held, so subscribers get them in order.
 */
export class StoreRepair<E extends DomainEvent, S extends DomainSnapshot> {
  constructor(
    private readonly store: BusStore<E, S>,
    private readonly stats: BusStats,
    private readonly bus: RepairedBus<E, S>,
  ) {}

  /** A live event skipped ahead of the channel's last seq: fill the gap from history first. */
  fillGap(orderId: string, ch: StreamChannel<E, S>, event: E): void {
    ch.held = [event];
    void this.repair(orderId, ch, () => this.backfill(orderId, ch));
  }

  /**
   * The store's feed came back after an interruption. Orders without subscribers are
   * simply forgotten (the next subscription reads them from the store afresh); orders
   * with subscribers are repaired: caught up from history, or reset when the store lost
   * its data. Every channel holds its live events from now until its repair is done.
   */
  resync(kind: StoreResync): void {
    this.stats.storeResyncs++;
    if (kind === StoreResync.DataLost) this.stats.storeDataLost++;
    for (const [orderId, ch] of [...this.bus.channels()]) {
      if (ch.held !== undefined) {
        // A loss outweighs a catch-up: the repair that follows must reset.
        if (ch.resyncPending !== StoreResync.DataLost) ch.resyncPending = kind;
        continue;
      }
      if (ch.subscribers.size === 0) {
        this.bus.forget(orderId, ch);
        continue;
      }
      ch.held = [];
      void this.repair(orderId, ch, () => this.resyncWork(orderId, ch, kind));
    }
  }

  /** One channel's repair after a store resync: catch up, or reset after a data loss. */
  private resyncWork(orderId: string, ch: StreamChannel<E, S>, kind: StoreResync): Promise<void> {
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
    ch: StreamChannel<E, S>,
    work: () => Promise<void>,
  ): Promise<void> {
    for (let next: (() => Promise<void>) | undefined = work; next !== undefined;) {
      try {
        await next();
      } catch {
        // The store is unreachable again: what is held goes out as it is (a gap becomes
        // an explicit reset), and the next resync repairs what is still missing.
      }
      if (!this.bus.isCurrent(orderId, ch)) return; // stopped or evicted meanwhile
      const kind = ch.resyncPending;
      ch.resyncPending = undefined;
      next = kind === undefined ? undefined : () => this.resyncWork(orderId, ch, kind);
    }
    const held = ch.held ?? [];
    ch.held = undefined;
    for (const e of held) this.bus.apply(ch, e);
  }

  /** Applies the store's history after this channel's last seq. */
  private async backfill(orderId: string, ch: StreamChannel<E, S>): Promise<void> {
    this.stats.backfills++;
    const events = await this.store.readHistory(orderId, ch.state.lastSeq);
    if (!this.bus.isCurrent(orderId, ch) || events === undefined) return;
    const before = this.stats.eventsIngested;
    for (const e of events) this.bus.apply(ch, e);
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
  private async catchUp(orderId: string, ch: StreamChannel<E, S>): Promise<void> {
    const stored = await this.store.getSnapshot(orderId);
    if (!this.bus.isCurrent(orderId, ch)) return;
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
    if (!this.bus.isCurrent(orderId, ch) || events === undefined) return;
    if (events[0]?.seq === local && events[0].publishedAtUs !== mine.publishedAtUs) {
      this.resetChannel(ch, stored);
      return;
    }
    const before = this.stats.eventsIngested;
    for (const e of events) this.bus.apply(ch, e);
    this.stats.eventsBackfilled += this.stats.eventsIngested - before;
  }

  private resetChannel(ch: StreamChannel<E, S>, stored: S | undefined): void {
    ch.ring.clear();
    this.resetSubscribers(ch, stored);
  }

  /** After the store lost its data: every subscriber is told, with the store's state now. */
  private async resetFromStore(orderId: string, ch: StreamChannel<E, S>): Promise<void> {
    const stored = await this.store.getSnapshot(orderId);
    if (!this.bus.isCurrent(orderId, ch)) return;
    this.resetSubscribers(ch, stored);
  }

  /**
   * Replaces every subscriber's view with `stored` (a Gap reset). When the store no
   * longer knows the order, the reset carries the last known state with lastSeq 0: seqs
   * start again at 1 if the order is published anew, and the client is told so.
   */
  private resetSubscribers(ch: StreamChannel<E, S>, stored: S | undefined): void {
    const previous = ch.state.snapshot();
    ch.state.replace(stored);
    const snapshot = stored ?? (previous ? { ...previous, lastSeq: 0 } : undefined);
    if (snapshot === undefined) return;
    for (const s of [...ch.subscribers]) s.resetTo(ResetReason.Gap, snapshot);
  }
}
