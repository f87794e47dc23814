import { StreamEndReason, type StreamItem } from '@app/contracts';
import type { OrderEventBus } from './event-bus';

/** @default 100 items per long-poll response */
export const DEFAULT_POLL_MAX_BATCH = 100;

export interface PollOptions {
  /** How long to hold the request when nothing is pending; 0 answers at once (short-poll). */
  waitMs: number;
  /** Most items in one response; the client asks again for the rest. @default 100 */
  maxBatch?: number;
  /** Label for per-transport metrics. @default 'long-poll' */
  transport?: string;
  /** Aborted when the client goes away: the bus subscription is released at once. */
  signal?: AbortSignal;
}

export interface PollResult {
  /** Events after the cursor, or one reset; empty when `waitMs` passed with nothing new. */
  readonly items: StreamItem[];
  /** Set when the order reached a terminal status and `items` holds its last event. */
  readonly completed: boolean;
  /** Set when the service ended the wait early with reconnect advice (shutdown). */
  readonly retryAfterMs?: number;
}

/**
 * One long-poll exchange, built on a normal bus subscription so it shares the replay,
 * reset and race handling of the streaming transports: whatever is pending after
 * `afterSeq` is answered at once; otherwise the first live event ends the wait.
 * Items are collected until the pump goes quiet (same tick), up to `maxBatch`.
 */
export async function pollOnce(
  bus: OrderEventBus,
  orderId: string,
  afterSeq: number,
  opts: PollOptions,
): Promise<PollResult> {
  const maxBatch = opts.maxBatch ?? DEFAULT_POLL_MAX_BATCH;
  const items: StreamItem[] = [];
  let completed = false;
  let retryAfterMs: number | undefined;
  let settle: (() => void) | undefined;
  let scheduled = false;
  const done = new Promise<void>((resolve) => (settle = resolve));
  // Answer once the synchronous burst of writes is over, so one response carries a batch.
  const finishSoon = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => settle?.());
  };

  const sub = await bus.open(
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

  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => settle?.();
  try {
    if (items.length === 0 && !completed) {
      if (opts.signal?.aborted) return { items, completed };
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (opts.waitMs <= 0) finishSoon();
      else timer = setTimeout(() => settle?.(), opts.waitMs);
    }
    await done;
    return { items, completed, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    sub.close();
  }
}
