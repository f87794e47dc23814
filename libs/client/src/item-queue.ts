/**
 * A single-consumer async queue: the watch pushes, `for await` pulls. Items wait here
 * while the consumer is busy; the queue does not bound itself: the watch reads `size`
 * and lets its connection go when the consumer falls behind, then waits in `drained()`.
 * After close() the consumer gets what is queued, then the iteration ends.
 */
export class ItemQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: ((r: IteratorResult<T>) => void) | undefined;
  /** The one drained() call in progress (the watch loop is its only caller). */
  private drain: { atMost: number; resolve: () => void } | undefined;
  private closed = false;
  private iterated = false;

  /** Items pushed and not yet taken by the consumer. */
  get size(): number {
    return this.items.length;
  }

  /**
   * Resolves once the consumer has taken enough that at most `atMost` items wait (at
   * once if that is already so), or when the queue closes or `signal` aborts.
   */
  drained(atMost: number, signal: AbortSignal): Promise<void> {
    if (this.items.length <= atMost || this.closed || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        this.drain = undefined;
        resolve();
      };
      this.drain = { atMost, resolve: done };
      signal.addEventListener('abort', done, { once: true });
    });
  }

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
    this.drain?.resolve();
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.iterated) throw new TypeError('a watch can be iterated once');
    this.iterated = true;
    return {
      next: () => {
        const item = this.items.shift();
        if (item !== undefined) {
          if (this.drain && this.items.length <= this.drain.atMost) this.drain.resolve();
          return Promise.resolve({ value: item, done: false });
        }
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
