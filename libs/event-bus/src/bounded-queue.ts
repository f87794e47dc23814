import { isTerminalStatus, ResetReason, type StreamItem, type StreamReset } from '@app/contracts';
import { OverflowPolicy } from './bus-options';

export type OfferResult =
  { readonly accepted: true; readonly dropped: number } | { readonly accepted: false };

/**
 * A subscriber's pending items, at most `capacity` of them. Resets are never dropped
 * (they carry the snapshot the client needs); the policy decides which events go when
 * the queue is full.
 */
export class BoundedQueue {
  private items: StreamItem[] = [];

  constructor(
    readonly capacity: number,
    readonly policy: OverflowPolicy,
  ) {}

  get length(): number {
    return this.items.length;
  }

  shift(): StreamItem | undefined {
    return this.items.shift();
  }

  /** Removes queued events with seq <= `seq` (already delivered by a replay). */
  removeEventsUpTo(seq: number): void {
    this.items = this.items.filter((it) => it.kind !== 'event' || it.event.seq > seq);
  }

  lastEventSeq(): number | undefined {
    for (let i = this.items.length - 1; i >= 0; i--) {
      const it = this.items[i];
      if (it.kind === 'event') return it.event.seq;
    }
    return undefined;
  }

  hasTerminalEvent(): boolean {
    return this.items.some((it) => it.kind === 'event' && isTerminalStatus(it.event.status));
  }

  /**
   * Adds an item. `{ accepted: false }` means the `disconnect` policy applies and the
   * subscription must end; otherwise `dropped` counts the items it discarded.
   */
  offer(item: StreamItem): OfferResult {
    if (this.items.length < this.capacity) {
      this.items.push(item);
      return { accepted: true, dropped: 0 };
    }
    switch (this.policy) {
      case OverflowPolicy.Disconnect:
        return { accepted: false };
      case OverflowPolicy.DropOldest: {
        const i = this.items.findIndex((it) => it.kind === 'event');
        if (i < 0) return this.mergeResets(item);
        this.items.splice(i, 1);
        this.items.push(item);
        return { accepted: true, dropped: 1 };
      }
      case OverflowPolicy.Conflate: {
        // Every event carries the order's full status, so queued events of the same order
        // are superseded by the new one: the client jumps straight to the newest status.
        const orderId = orderIdOf(item);
        const kept = this.items.filter((it) => it.kind !== 'event' || it.event.orderId !== orderId);
        if (kept.length >= this.capacity) return this.mergeResets(item);
        const dropped = this.items.length - kept.length;
        this.items = kept;
        this.items.push(item);
        return { accepted: true, dropped };
      }
    }
  }

  /**
   * The queue is full and only resets are left to drop. A reset must not simply go (the
   * client would miss a gap), but a newer reset supersedes it: the client replaces its
   * whole view with the newest snapshot either way. So the order's queued items and `item`
   * merge into one reset carrying the newest state, and the capacity bound still holds.
   * (A subscriber's queue holds one order.)
   */
  private mergeResets(item: StreamItem): OfferResult {
    const orderId = orderIdOf(item);
    let reason = ResetReason.Gap;
    for (const it of this.items) {
      if (it.kind === 'reset' && it.reset.snapshot.orderId === orderId) reason = it.reset.reason;
    }
    const reset: StreamReset =
      item.kind === 'reset'
        ? item.reset
        : {
            reason,
            snapshot: {
              orderId,
              status: item.event.status,
              lastSeq: item.event.seq,
              updatedAtUs: item.event.publishedAtUs,
            },
          };
    const before = this.items.length;
    this.items = this.items.filter((it) => orderIdOf(it) !== orderId);
    this.items.push({ kind: 'reset', reset });
    return { accepted: true, dropped: before + 1 - this.items.length };
  }
}

function orderIdOf(item: StreamItem): string {
  return item.kind === 'event' ? item.event.orderId : item.reset.snapshot.orderId;
}
