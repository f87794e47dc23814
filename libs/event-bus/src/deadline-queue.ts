/** Longest delay setTimeout honours (~24.8 days); a later deadline is re-armed on the way. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Something with one deadline at a time in a DeadlineQueue. The two fields belong to the
 * queue: an entry starts with `deadlineSlot = -1` and never writes them itself.
 */
export interface DeadlineEntry {
  /** The entry's position in the queue; -1 when it has no deadline. */
  deadlineSlot: number;
  /** Epoch ms the entry is due (meaningful while queued). */
  deadlineAtMs: number;
  /** Called once the deadline has passed; the entry is out of the queue by then. */
  onDeadline(): void;
}

/**
 * Deadlines of many entries on one timer: a binary min-heap by due time, with the Node
 * timer armed for the earliest one.
 *
 * Why not a setTimeout per entry: every subscription has a deadline (its max age, with a
 * random jitter, or its token's expiry), and Node keeps a Timeout, its callback and a
 * timer list per distinct duration for every idle subscription. Here an
 * entry costs a heap slot and two number fields.
 */
export class DeadlineQueue {
  private readonly heap: DeadlineEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (Infinity: none armed). */
  private timerAtMs = Infinity;
  private readonly fire = () => this.onTimer();

  /** Entries waiting. */
  get size(): number {
    return this.heap.length;
  }

  /** Sets (or moves) `entry`'s deadline to `atMs`, epoch ms. */
  schedule(entry: DeadlineEntry, atMs: number): void {
    if (Number.isNaN(atMs)) throw new TypeError('deadline must be a number');
    if (entry.deadlineSlot >= 0) this.removeAt(entry.deadlineSlot);
    entry.deadlineAtMs = atMs;
    entry.deadlineSlot = this.heap.length;
    this.heap.push(entry);
    this.up(entry.deadlineSlot);
    this.arm();
  }

  /** Removes `entry`'s deadline, if it has one. */
  cancel(entry: DeadlineEntry): void {
    if (entry.deadlineSlot < 0) return;
    this.removeAt(entry.deadlineSlot);
    this.arm();
  }

  private removeAt(slot: number): void {
    const heap = this.heap;
    heap[slot].deadlineSlot = -1;
    const last = heap.pop() as DeadlineEntry;
    if (slot === heap.length) return;
    heap[slot] = last;
    last.deadlineSlot = slot;
    this.down(slot);
    this.up(last.deadlineSlot);
  }

  private onTimer(): void {
    this.timer = undefined;
    this.timerAtMs = Infinity;
    const now = Date.now();
    for (;;) {
      const first = this.heap[0];
      if (first === undefined || first.deadlineAtMs > now) break;
      this.removeAt(0);
      // An entry may schedule itself (or others) again from here.
      first.onDeadline();
    }
    this.arm();
  }

  /**
   * Arms the timer for the earliest deadline when that comes sooner than the armed one,
   * and drops it when nothing is left. When the earliest deadline moves later (the entry
   * due first was cancelled: an answered poll, a closed stream, most cancels at load),
   * the armed timer stays: it fires early, finds nothing due and arms for what is left.
   * Re-arming on each such cancel cost a clearTimeout and a setTimeout per long-poll
   * answer.
   */
  private arm(): void {
    const atMs = this.heap[0]?.deadlineAtMs ?? Infinity;
    if (atMs === this.timerAtMs || (atMs > this.timerAtMs && atMs !== Infinity)) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAtMs = atMs;
    if (atMs === Infinity) return;
    // A capped timer fires early, finds nothing due and re-arms for what is left.
    const ms = Math.min(Math.max(0, atMs - Date.now()), MAX_TIMER_MS);
    this.timer = setTimeout(this.fire, ms);
    this.timer.unref();
  }

  private up(slot: number): void {
    const heap = this.heap;
    const entry = heap[slot];
    while (slot > 0) {
      const parent = (slot - 1) >> 1;
      if (heap[parent].deadlineAtMs <= entry.deadlineAtMs) break;
      heap[slot] = heap[parent];
      heap[slot].deadlineSlot = slot;
      slot = parent;
    }
    heap[slot] = entry;
    entry.deadlineSlot = slot;
  }

  private down(slot: number): void {
    const heap = this.heap;
    const entry = heap[slot];
    for (;;) {
      const left = 2 * slot + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child =
        right < heap.length && heap[right].deadlineAtMs < heap[left].deadlineAtMs ? right : left;
      if (heap[child].deadlineAtMs >= entry.deadlineAtMs) break;
      heap[slot] = heap[child];
      heap[slot].deadlineSlot = slot;
      slot = child;
    }
    heap[slot] = entry;
    entry.deadlineSlot = slot;
  }
}
