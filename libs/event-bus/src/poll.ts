import { StreamEndReason, type StreamItem } from '@app/contracts';
import type { OrderEventBus } from './event-bus';
import type { BusSubscription } from './subscriber';

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
  readonly items: StreamItem[];
  /** Set when the order reached a terminal status and `items` holds its last event. */
  readonly completed: boolean;
  /** Set when the service ended the wait early with reconnect advice (shutdown). */
  readonly retryAfterMs?: number;
}

/** A poll waiting for something to answer; see openPoll. */
export interface PollHold {
  /** Answers now with what has been collected (usually nothing) and releases everything. */
  cancel(): void;
}

/**
 * One long-poll exchange, built on a normal bus subscription so it shares the replay,
 * reset and race handling of the streaming transports: whatever is pending after
 * `afterSeq` is answered at once; otherwise the first live event ends the wait.
 * Items are collected until the pump goes quiet (same tick), up to `maxBatch`.
 *
 * Callback-shaped because a server holds many polls at once: it resolves as soon as the
 * subscription is open (rejecting with the bus's typed errors), and `onResult` is called
 * exactly once later, when the poll is answered, times out or is cancelled. Nothing
 * stays suspended in between (no pending async function, no promise chain), only the
 * subscription, a timer and this closure: a held request is mostly idle memory.
 */
export async function openPoll(
  bus: OrderEventBus,
  orderId: string,
  afterSeq: number,
  opts: PollOptions,
  onResult: (result: PollResult) => void,
): Promise<PollHold> {
  const maxBatch = opts.maxBatch ?? DEFAULT_POLL_MAX_BATCH;
  const items: StreamItem[] = [];
  let completed = false;
  let retryAfterMs: number | undefined;
  // Assigned when the open resolves; a batch answered during the open finds it unset.
  let sub: BusSubscription | undefined = undefined;
  let timer: NodeJS.Timeout | undefined;
  let scheduled = false;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    sub?.close();
    onResult({ items, completed, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
  };
  // Answer once the synchronous burst of writes is over, so one response carries a batch.
  const finishSoon = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(finish);
  };

  sub = await bus.open(
    orderId,
    afterSeq,
    {
      write(item) {
        items.push(item);
        finishSoon();
        // Returning false stops the pump: the rest stays for the next poll.
        return items.length < maxBatch;
      },
      onDrain() {
        // Never resumed: this subscription ends with the response.
      },
      end(reason: StreamEndReason, advice?: number) {
        completed = reason === StreamEndReason.Completed;
        retryAfterMs = advice;
        finishSoon();
      },
    },
    { transport: opts.transport ?? 'long-poll', maxAgeMs: 0 },
  );
  // Replayed items may have been answered while the open was still reading history.
  if (finished) sub.close();
  else if (items.length === 0 && !completed) {
    if (opts.waitMs <= 0) finishSoon();
    else timer = setTimeout(finish, opts.waitMs);
  }
  return { cancel: finish };
}
