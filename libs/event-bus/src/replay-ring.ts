import type { DomainEvent } from '@app/contracts';

/**
 * The last `capacity` events of one order, contiguous in seq, for resume. Events older
 * than `maxAgeMs` are pruned lazily (on push and on read), so an idle order costs no timer.
 */
export class ReplayRing<E extends DomainEvent> {
  private readonly buf: (E | undefined)[];
  private head = 0; // index of the oldest event
  private count = 0;

  constructor(
    private readonly capacity: number,
    private readonly maxAgeMs: number,
  ) {
    // Grows as events arrive (JS arrays extend on write): most orders never fill a ring,
    // and a preallocated one cost every order capacity x 8 bytes up front.
    this.buf = [];
  }

  get size(): number {
    return this.count;
  }

  /** Seq of the oldest retained event, or undefined when empty. */
  firstSeq(nowUs: number): number | undefined {
    this.prune(nowUs);
    return this.count === 0 ? undefined : this.at(0).seq;
  }

  /** The newest retained event, or undefined when empty. */
  last(): E | undefined {
    return this.count === 0 ? undefined : this.at(this.count - 1);
  }

  /** Appends an event; the caller guarantees seq continuity (or calls `clear()` first). */
  push(event: E): void {
    if (this.count === this.capacity) {
      this.buf[this.head] = undefined;
      this.head = (this.head + 1) % this.capacity;
      this.count--;
    }
    this.buf[(this.head + this.count) % this.capacity] = event;
    this.count++;
    this.prune(event.publishedAtUs);
  }

  clear(): void {
    this.buf.length = 0;
    this.head = 0;
    this.count = 0;
  }

  /**
   * Events with seq > afterSeq, or undefined when the ring does not reach back that far
   * (the caller must then look elsewhere or reset the client). An empty array means the
   * client is up to date.
   */
  after(afterSeq: number, nowUs: number): E[] | undefined {
    this.prune(nowUs);
    if (this.count === 0) return undefined;
    const first = this.at(0).seq;
    const last = this.at(this.count - 1).seq;
    if (afterSeq >= last) return [];
    if (afterSeq + 1 < first) return undefined;
    const out: E[] = [];
    for (let i = afterSeq + 1 - first; i < this.count; i++) out.push(this.at(i));
    return out;
  }

  private at(i: number): E {
    return this.buf[(this.head + i) % this.capacity] as E;
  }

  private prune(nowUs: number): void {
    const oldestAllowedUs = nowUs - this.maxAgeMs * 1000;
    // Keep the newest event whatever its age: it is the current state, and resuming
    // from the seq just before it must not need a reset.
    while (this.count > 1 && this.at(0).publishedAtUs < oldestAllowedUs) {
      this.buf[this.head] = undefined;
      this.head = (this.head + 1) % this.capacity;
      this.count--;
    }
  }
}
