/**
 * A single-consumer async queue: the watch pushes, `for await` pulls. Each item carries
 * the position it brings the consumer to (the seq to resume after once it has been
 * handed over), so `handed` is what the consumer was given, never what waits here.
 * The queue does not bound itself: the watch reads `size` and lets its connection go
 * when the consumer falls behind, then waits in `drained()`.
 */
export class ItemQueue<T> implements AsyncIterable<T> {
  private entries: { readonly item: T; readonly position: number }[] = [];
  private waiter: ((r: IteratorResult<T>) => void) | undefined;
  /** The one drained() call in progress (the watch loop is its only caller). */
  private drain: { atMost: number; resolve: () => void } | undefined;
  private closed = false;
  private iterated = false;

  constructor(
    private position: number,
    /** Called with every item as the consumer takes it. */
    private readonly onTake: (item: T) => void,
    /** Called when the consumer stops iterating early (`break`, `return`, a throw). */
    private readonly onReturn: () => void,
  ) {}

  /** The position of the last item the consumer took (the initial one before that). */
  get handed(): number {
    return this.position;
  }

  /** Items pushed and not yet taken by the consumer. */
  get size(): number {
    return this.entries.length;
  }

  /**
   * Resolves once the consumer has taken enough that at most `atMost` items wait (at
   * once if that is already so), or when the queue closes or `signal` aborts.
   */
  drained(atMost: number, signal: AbortSignal): Promise<void> {
    if (this.entries.length <= atMost || this.closed || signal.aborted) return Promise.resolve();
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

  push(item: T, position: number): void {
    if (this.closed) return;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      this.take(item, position);
      w({ value: item, done: false });
    } else {
      this.entries.push({ item, position });
    }
  }

  /**
   * Ends the queue with `last`: after what waits, or instead of it with `discard` (the
   * consumer asked to stop: it gets `last` next, and its position stays what it took).
   * May be called again with `discard` to replace a `last` the consumer has not taken.
   */
  finish(last: T, discard: boolean): void {
    if (discard) this.entries = [];
    else if (this.closed) return;
    this.closed = true;
    const w = this.waiter;
    this.waiter = undefined;
    if (w) {
      this.take(last, this.position);
      w({ value: last, done: false });
    } else {
      // The end moves nobody: it stands where the item before it leaves the consumer.
      this.entries.push({ item: last, position: this.entries.at(-1)?.position ?? this.position });
    }
    this.drain?.resolve();
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.iterated) throw new TypeError('a watch can be iterated once');
    this.iterated = true;
    return {
      next: () => {
        const entry = this.entries.shift();
        if (entry !== undefined) {
          this.take(entry.item, entry.position);
          if (this.drain && this.entries.length <= this.drain.atMost) this.drain.resolve();
          return Promise.resolve({ value: entry.item, done: false });
        }
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.waiter = resolve));
      },
      // `break` out of a for-await: the consumer is gone, nothing more is handed to it.
      return: () => {
        this.onReturn();
        this.entries = [];
        this.closed = true;
        const w = this.waiter;
        this.waiter = undefined;
        w?.({ value: undefined, done: true });
        this.drain?.resolve();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private take(item: T, position: number): void {
    this.position = position;
    this.onTake(item);
  }
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
