import { StreamEndReason, type StreamItemOf } from '@app/contracts';
import type {
  DeadlineEntry,
  DeadlineQueue,
  DeliverySink,
  StreamEventBus,
  BusSubscription,
} from '@app/event-bus';

/** @default 100 items per long-poll response */
export const DEFAULT_POLL_MAX_BATCH = 100;

export interface PollOptions {
  /** How long to hold the request when nothing is pending; 0 answers at once (short-poll). */
  waitMs: number;
  /** Most items in one response; the client asks again for the rest. @default 100 */
  maxBatch?: number;
  /** Label for per-transport metrics. @default 'long-poll' */
  transport?: string;
}

export interface PollResult {
  /** Events after the cursor, or one reset; empty when `waitMs` passed with nothing new. */
  readonly items: StreamItemOf[];
  /** Set when the order reached a terminal status and `items` holds its last event. */
  readonly completed: boolean;
  /** Set when the service ended the wait early with reconnect advice (shutdown). */
  readonly retryAfterMs?: number;
}

/** A poll waiting for something to answer; see openPoll. */
export interface PollHold {
  /** Answers now with what has been collected (usually nothing) and releases everything. */
  close(): void;
}

/**
 * One long-poll exchange, built on a normal bus subscription so it shares the replay,
 * reset and race handling of the streaming transports: whatever is pending after
 * `afterSeq` is answered at once; otherwise the first live event ends the wait.
 * Items are collected until the pump goes quiet (same tick), up to `maxBatch`.
 *
 * Callback-shaped because a server holds many polls at once: it resolves as soon as the
 * subscription is open (rejecting with the bus's typed errors), and `onResult` is called
 * exactly once later, when the poll is answered, times out or is closed. Nothing stays
 * suspended in between (no pending async function, no promise chain), only the
 * subscription and one object that is the poll's sink, its wait deadline (in the bus's
 * deadline queue, not a timer of its own) and its handle: a held request is mostly idle
 * memory.
 */
export async function openPoll(
  bus: StreamEventBus,
  orderId: string,
  afterSeq: number,
  opts: PollOptions,
  onResult: (result: PollResult) => void,
): Promise<PollHold> {
  const poll = new Poll(bus.deadlines, opts.maxBatch ?? DEFAULT_POLL_MAX_BATCH, onResult);
  const sub = await bus.open(orderId, afterSeq, poll, {
    transport: opts.transport ?? 'long-poll',
    maxAgeMs: 0,
  });
  poll.opened(sub, opts.waitMs);
  return poll;
}

class Poll implements DeliverySink, PollHold, DeadlineEntry {
  private readonly items: StreamItemOf[] = [];
  private completed = false;
  private retryAfterMs: number | undefined;
  /** Set when the open resolves; a batch answered during the open finds it unset. */
  private sub: BusSubscription | undefined;
  private scheduled = false;
  private finished = false;
  deadlineSlot = -1;
  deadlineAtMs = Infinity;

  constructor(
    private readonly deadlines: DeadlineQueue,
    private readonly maxBatch: number,
    private onResult: ((result: PollResult) => void) | undefined,
  ) {}

  /** The subscription is open: hold the request unless something was answered already. */
  opened(sub: BusSubscription, waitMs: number): void {
    // Replayed items may have been answered while the open was still reading history.
    if (this.finished) {
      sub.close();
      return;
    }
    this.sub = sub;
    if (this.items.length > 0 || this.completed) return;
    if (waitMs <= 0) this.finishSoon();
    else this.deadlines.schedule(this, Date.now() + waitMs);
  }

  write(item: StreamItemOf): boolean {
    this.items.push(item);
    this.finishSoon();
    // Returning false stops the pump: the rest stays for the next poll.
    return this.items.length < this.maxBatch;
  }

  onDrain(): void {
    // Never resumed: this subscription ends with the response.
  }

  end(reason: StreamEndReason, advice?: number): void {
    this.completed = reason === StreamEndReason.Completed;
    this.retryAfterMs = advice;
    this.finishSoon();
  }

  close(): void {
    this.finish();
  }

  /** The wait is over with nothing new. */
  onDeadline(): void {
    this.finish();
  }

  /** Answers once the synchronous burst of writes is over, so one response carries a batch. */
  private finishSoon(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.finish());
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.deadlines.cancel(this);
    this.sub?.close();
    const onResult = this.onResult;
    this.onResult = undefined;
    onResult?.({
      items: this.items,
      completed: this.completed,
      ...(this.retryAfterMs !== undefined ? { retryAfterMs: this.retryAfterMs } : {}),
    });
  }
}
