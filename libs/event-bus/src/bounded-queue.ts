import {
  cursorAfter,
  eventOf,
  isReset,
  isSkipped,
  ResetReason,
  SkipReason,
  type DomainEvent,
  type DomainSnapshot,
  type SkippedItem,
  type StreamDomain,
  type StreamItemOf,
  type StreamResetOf,
} from '@app/contracts';
import { OverflowPolicy } from './bus-options';

export type OfferResult =
  | {
      readonly accepted: true;
      /** Events the policy took out of the queue (each one signalled, never silent). */
      readonly dropped: number;
    }
  | { readonly accepted: false };

/**
 * Where a queue that folds reads the stream's whole state from (its subscriber, which reads
 * its channel's): one object shared for the queue's life, so a fold costs a read, never a
 * copy of the state kept per subscriber.
 */
export interface StateSource<E extends DomainEvent, S extends DomainSnapshot> {
  /** The stream's whole state once `event` (the newest offered) is applied, owner included. */
  stateAt(event: E): S;
}

/** The answers that carry no count, shared rather than made for every offer. */
const ACCEPTED: OfferResult = Object.freeze({ accepted: true, dropped: 0 });
const REFUSED: OfferResult = Object.freeze({ accepted: false });

/**
 * A subscriber's pending items, at most `capacity` of them, for one order, in seq order.
 *
 * Nothing leaves it silently. When the policy drops events, they are replaced in place by
 * a `skipped {fromSeq, toSeq}` marker, and adjacent markers merge, so the client still
 * sees every seq once: delivered, inside a skipped range, or covered by a reset. Markers
 * count against the capacity like any item. Resets are never dropped: a reset replaces
 * the client's whole view, so what is queued before the newest reset may go, and a newer
 * reset may stand in for an older one. When even that leaves no room for a marker beside
 * the newest event (capacity 1 or 2), the queue folds into one reset carrying the stream's
 * whole state, read from `source` (the newest event alone is not it when a domain has
 * several kinds): still explicit, and still within the bound.
 */
export class BoundedQueue<E extends DomainEvent, S extends DomainSnapshot> {
  private items: StreamItemOf<E, S>[] = [];

  constructor(
    readonly capacity: number,
    readonly policy: OverflowPolicy,
    private readonly domain: StreamDomain<E, S>,
    private readonly source: StateSource<E, S>,
  ) {}

  get length(): number {
    return this.items.length;
  }

  shift(): StreamItemOf<E, S> | undefined {
    return this.items.shift();
  }

  /**
   * Removes what a replay up to `seq` has already delivered: events and resets at or
   * below it, and the covered part of skipped ranges.
   */
  removeUpTo(seq: number): void {
    const kept: StreamItemOf<E, S>[] = [];
    for (const it of this.items) {
      if (cursorAfter(it) <= seq) continue;
      if (isSkipped(it) && it.skipped.fromSeq <= seq) {
        kept.push({ kind: 'skipped', skipped: { ...it.skipped, fromSeq: seq + 1 } });
      } else {
        kept.push(it);
      }
    }
    this.items = kept;
  }

  /** The client's cursor once everything queued is delivered (undefined: queue empty). */
  lastSeq(): number | undefined {
    const last = this.items.at(-1);
    return last === undefined ? undefined : cursorAfter(last);
  }

  /** Whether a queued event, or a queued reset's snapshot, finishes the stream. */
  hasTerminal(): boolean {
    return this.items.some((it) => {
      if (isReset(it)) {
        return it.reset.snapshot.lastSeq > 0 && this.domain.isTerminalSnapshot(it.reset.snapshot);
      }
      const event = eventOf(it);
      return event !== undefined && this.domain.isTerminal(event);
    });
  }

  /**
   * Adds an event or a reset (skipped markers are made here, never offered).
   * `{ accepted: false }` means the `disconnect` policy applies and the subscription must
   * end; otherwise `dropped` counts the events replaced by a marker or a reset.
   */
  offer(item: StreamItemOf<E, S>): OfferResult {
    if (this.items.length < this.capacity) {
      this.items.push(item);
      return ACCEPTED;
    }
    if (this.policy === OverflowPolicy.Disconnect) return REFUSED;
    const before = this.eventCount();
    this.makeRoom(item);
    if (this.items.length < this.capacity) {
      const dropped = before - this.eventCount();
      this.items.push(item);
      return { accepted: true, dropped };
    }
    // Folded: the queued events and `item` itself are all carried by the one reset.
    this.fold(item);
    return { accepted: true, dropped: before + (eventOf(item) !== undefined ? 1 : 0) };
  }

  /** Applies the policy to a full queue; `item` is what must fit after it. */
  private makeRoom(item: StreamItemOf<E, S>): void {
    if (isReset(item)) {
      // The new reset replaces the client's view: nothing queued before it matters.
      this.items = [];
      return;
    }
    // The newest queued reset covers everything before it.
    let lastReset = -1;
    this.items.forEach((it, i) => {
      if (isReset(it)) lastReset = i;
    });
    if (lastReset > 0) this.items = this.items.slice(lastReset);
    if (this.policy === OverflowPolicy.Conflate) {
      // The newest event stands for what was skipped (the domain's contract for
      // conflation): it supersedes all queued events, and the client jumps straight to it.
      for (let i = this.oldestEvent(); i >= 0; i = this.oldestEvent()) this.replaceBySkip(i);
    } else {
      while (this.items.length >= this.capacity) {
        const i = this.oldestEvent();
        if (i < 0) break;
        this.replaceBySkip(i);
      }
    }
  }

  /**
   * No room for a marker beside `item` (the queue holds a reset and a marker, or the
   * capacity is 1): the queue becomes one reset with the stream's state as of `item`. The
   * reason of a queued reset is kept (the client learns the original cause), else `overflow`.
   */
  private fold(item: StreamItemOf<E, S>): void {
    let reset: StreamResetOf<S>;
    const event = eventOf(item);
    if (isReset(item)) {
      reset = item.reset;
    } else if (event !== undefined) {
      const queued = this.items.findLast(isReset);
      reset = {
        reason: queued?.reset.reason ?? ResetReason.Overflow,
        snapshot: this.source.stateAt(event),
      };
    } else {
      throw new TypeError('skipped markers are made by the queue, never offered');
    }
    this.items = [{ kind: 'reset', reset }];
  }

  /** Replaces the event at `i` by a skipped marker, merged with adjacent markers. */
  private replaceBySkip(i: number): void {
    const event = eventOf(this.items[i]);
    if (event === undefined) return;
    let from = event.seq;
    let to = event.seq;
    let start = i;
    let count = 1;
    const prev = this.items[i - 1];
    if (isSkipped(prev)) {
      from = prev.skipped.fromSeq;
      start = i - 1;
      count++;
    }
    const next = this.items[i + 1];
    if (isSkipped(next)) {
      to = next.skipped.toSeq;
      count++;
    }
    const marker: SkippedItem = {
      kind: 'skipped',
      skipped: { fromSeq: from, toSeq: to, reason: SkipReason.Overflow },
    };
    this.items.splice(start, count, marker);
  }

  private oldestEvent(): number {
    return this.items.findIndex((it) => eventOf(it) !== undefined);
  }

  private eventCount(): number {
    let n = 0;
    for (const it of this.items) if (eventOf(it) !== undefined) n++;
    return n;
  }
}
