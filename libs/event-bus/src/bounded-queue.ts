import { isTerminalStatus, type StreamItem } from '@app/contracts';
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
   * subscription must end; otherwise `dropped` counts the events it discarded.
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
        if (i >= 0) this.items.splice(i, 1);
        this.items.push(item);
        return { accepted: true, dropped: i >= 0 ? 1 : 0 };
      }
      case OverflowPolicy.Conflate: {
        // Every event carries the order's full status, so queued events of the same order
        // are superseded by the new one: the client jumps straight to the newest status.
        const before = this.items.length;
        const orderId = item.kind === 'event' ? item.event.orderId : item.reset.snapshot.orderId;
        this.items = this.items.filter((it) => it.kind !== 'event' || it.event.orderId !== orderId);
        this.items.push(item);
        return { accepted: true, dropped: before + 1 - this.items.length };
      }
    }
  }
}
