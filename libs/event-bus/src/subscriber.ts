import {
  isTerminalStatus,
  ResetReason,
  StreamEndReason,
  type OrderStatusChanged,
  type StreamItem,
} from '@app/contracts';
import { BoundedQueue } from './bounded-queue';
import type { OverflowPolicy } from './bus-options';
import { bump, type BusStats } from './bus-stats';
import type { DeliverySink } from './delivery-sink';

/** The handle a transport keeps for one subscription; `close()` releases it. */
export interface BusSubscription {
  readonly orderId: string;
  /** Items waiting for the transport (replay backlog plus live queue). */
  readonly pending: number;
  /** Releases the subscription; idempotent. The sink is not called again. */
  close(): void;
}

/**
 * One subscription: a replay backlog (what the client missed, never dropped, at most a
 * ring's worth), then a bounded live queue, pumped into the transport's sink only while
 * the sink accepts writes.
 *
 * Gap and duplicate freedom rest on one number, `cursor`: the last seq accepted for this
 * client. Live events at or below it are duplicates and skipped; an event above
 * `cursor + 1` means events were lost upstream and the client gets an explicit reset.
 * While the replay is being read (`replaying`), live events are parked in the queue and
 * trimmed against the replay when it arrives, which closes the replay/live race.
 */
export class Subscriber implements BusSubscription {
  private cursor = 0;
  private replaying = true;
  private backlog: StreamItem[] = [];
  private backlogIndex = 0;
  private waitingForDrain = false;
  private completing = false;
  private closed = false;
  private maxAgeTimer?: NodeJS.Timeout;
  private readonly queue: BoundedQueue;

  constructor(
    readonly orderId: string,
    readonly transport: string,
    private readonly sink: DeliverySink,
    capacity: number,
    private readonly policy: OverflowPolicy,
    private readonly stats: BusStats,
    private readonly release: (s: Subscriber) => void,
  ) {
    this.queue = new BoundedQueue(capacity, policy);
  }

  get pending(): number {
    return this.backlog.length - this.backlogIndex + this.queue.length;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Called by the bus for every live event of this order, in seq order. */
  offerLive(event: OrderStatusChanged): void {
    if (this.closed) return;
    if (this.replaying) {
      this.enqueue({ kind: 'event', event });
      return;
    }
    if (event.seq <= this.cursor) return;
    if (event.seq > this.cursor + 1) {
      // Events between cursor and this one never reached this process: say so.
      this.stats.resets[ResetReason.Gap]++;
      this.enqueue({
        kind: 'reset',
        reset: { reason: ResetReason.Gap, snapshot: snapshotOf(event) },
      });
    } else {
      this.enqueue({ kind: 'event', event });
    }
    this.cursor = event.seq;
    if (isTerminalStatus(event.status)) this.completing = true;
    this.pump();
  }

  /**
   * Ends the replay phase: `backlog` is what the client missed (events, or one reset),
   * `cursor` the last seq it covers, `terminal` whether the order is finished at `cursor`.
   */
  startLive(backlog: StreamItem[], cursor: number, terminal: boolean): void {
    if (this.closed) return;
    this.backlog = backlog;
    this.cursor = cursor;
    this.completing = terminal;
    // Live events parked during the replay: drop what the backlog already covers.
    this.queue.removeEventsUpTo(cursor);
    const lastQueued = this.queue.lastEventSeq();
    if (lastQueued !== undefined && lastQueued > this.cursor) {
      this.cursor = lastQueued;
      this.completing ||= this.queue.hasTerminalEvent();
    }
    this.replaying = false;
    this.pump();
  }

  /**
   * Ends the subscription with `max_age` after `ms`, so long-lived streams are spread
   * over instances again as load balancers see reconnects; clients resume from their
   * last seq and lose nothing.
   */
  expireAfter(ms: number): void {
    if (this.closed) return;
    clearTimeout(this.maxAgeTimer);
    this.maxAgeTimer = setTimeout(() => this.end(StreamEndReason.MaxAge), ms);
    this.maxAgeTimer.unref();
  }

  /** Ends the subscription from the service side and tells the transport why. */
  end(reason: StreamEndReason): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.maxAgeTimer);
    this.release(this);
    this.sink.end(reason);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.maxAgeTimer);
    this.release(this);
  }

  private enqueue(item: StreamItem): void {
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

  private next(): StreamItem | undefined {
    if (this.backlogIndex < this.backlog.length) {
      const item = this.backlog[this.backlogIndex++];
      if (this.backlogIndex === this.backlog.length) {
        this.backlog = [];
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
      const item = this.next();
      if (item === undefined) break;
      this.stats.itemsDelivered++;
      bump(this.stats.deliveredByTransport, this.transport, 1);
      if (!this.sink.write(item)) {
        if (this.closed) return;
        this.waitingForDrain = true;
        this.sink.onDrain(() => {
          this.waitingForDrain = false;
          this.pump();
        });
        return;
      }
    }
    if (this.completing) this.end(StreamEndReason.Completed);
  }
}

function snapshotOf(event: OrderStatusChanged) {
  return {
    orderId: event.orderId,
    status: event.status,
    lastSeq: event.seq,
    updatedAtUs: event.publishedAtUs,
  };
}
