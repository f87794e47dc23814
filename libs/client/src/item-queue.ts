/**
 * A single-consumer async queue: the watch pushes, `for await` pulls. Items wait here
 * while the consumer is busy (a watch delivers one order's items, a bounded trickle).
 * After close() the consumer gets what is queued, then the iteration ends.
 */
export class ItemQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: ((r: IteratorResult<T>) => void) | undefined;
  private closed = false;
  private iterated = false;

  push(item: T): void {
    if (this.closed) return;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  close(): void {
    this.closed = true;
    const w = this.waiter;
    this.waiter = undefined;
    w?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.iterated) throw new TypeError('a watch can be iterated once');
    this.iterated = true;
    return {
      next: () => {
        const item = this.items.shift();
        if (item !== undefined) return Promise.resolve({ value: item, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.waiter = resolve));
      },
      // `break` out of a for-await: the consumer is gone, stop queueing.
      return: () => {
        this.onReturn?.();
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  /** Called when the consumer stops iterating early. */
  onReturn: (() => void) | undefined;
}

/** Resolves after `ms`, or at once when `signal` aborts; leaves no timer behind. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
