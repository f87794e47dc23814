/**
 * A store wrapper whose reads really yield, for the replay/live race specs: the stores the
 * bus runs on in tests answer `getSnapshot`/`readHistory` without ever giving the event
 * loop a turn, so no live event can arrive while a replay is being read. This one parks
 * every read twice, before it asks the inner store (the question is on its way) and after
 * (the answer is on its way back), and lets the spec publish at either point; each park
 * lasts at least one macrotask, so concurrent publishers interleave with the reads. Not
 * exported from the library's index.
 */
import type { Observable } from 'rxjs';
import {
  eventOf,
  isReset,
  type AppendOptions,
  type AppendRule,
  type DomainEvent,
  type DomainSnapshot,
  type EventDraft,
  type StreamDomain,
  type StreamItemOf,
} from '@app/contracts';
import { StreamStore, type StoreResync } from '@app/store/stream-store';

export type ReadKind = 'snapshot' | 'history';

/**
 * Where a read stands: `before` the inner store is asked (what it answers will include
 * anything published now), `after` it answered (its answer misses anything published now).
 */
export type ReadPoint = `${ReadKind}:${'before' | 'after'}`;

export const READ_POINTS: readonly ReadPoint[] = [
  'snapshot:before',
  'snapshot:after',
  'history:before',
  'history:after',
];

/** Called at each read point; may publish, and may delay the read by returning a promise. */
export type ReadHook = (point: ReadPoint, orderId: string) => void | Promise<void>;

export class YieldingStore<E extends DomainEvent, S extends DomainSnapshot> extends StreamStore<
  E,
  S
> {
  readonly domain: StreamDomain<E, S>;
  readonly events$: Observable<E>;
  readonly resync$?: Observable<StoreResync>;
  /** Every read point reached, in order (the specs check the one they staged was reached). */
  readonly reached: ReadPoint[] = [];
  /** Runs at every read point; the read waits for what it returns. */
  hook: ReadHook = () => undefined;

  constructor(private readonly inner: StreamStore<E, S>) {
    super();
    this.domain = inner.domain;
    this.events$ = inner.events$;
    this.resync$ = inner.resync$;
    // Routing is forwarded only when the inner store routes: the bus tells the two kinds
    // apart by whether `watch` exists.
    if (inner.watch !== undefined)
      this.watch = (orderId) => inner.watch?.(orderId) ?? Promise.resolve();
    if (inner.unwatch !== undefined) this.unwatch = (orderId) => inner.unwatch?.(orderId);
  }

  append(draft: EventDraft<E>, rule: AppendRule, options?: AppendOptions): Promise<E> {
    return this.inner.append(draft, rule, options);
  }

  getSnapshot(orderId: string): Promise<S | undefined> {
    return this.read('snapshot', orderId, () => this.inner.getSnapshot(orderId));
  }

  readHistory(orderId: string, afterSeq: number): Promise<E[] | undefined> {
    return this.read('history', orderId, () => this.inner.readHistory(orderId, afterSeq));
  }

  health() {
    return this.inner.health?.() ?? 'up';
  }

  close(): void | Promise<void> {
    return this.inner.close?.();
  }

  private async read<T>(kind: ReadKind, orderId: string, ask: () => Promise<T>): Promise<T> {
    await this.park(`${kind}:before`, orderId);
    const answer = await ask();
    await this.park(`${kind}:after`, orderId);
    return answer;
  }

  private async park(point: ReadPoint, orderId: string): Promise<void> {
    this.reached.push(point);
    await macrotask();
    await this.hook(point, orderId);
    await macrotask();
  }
}

/** Resolves after one turn of the event loop (timers and I/O callbacks get to run). */
export function macrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Checks what one subscriber received against the guarantees: starting after `afterSeq`,
 * every event is the next seq (no gap, no duplicate, in order), a reset moves the count to
 * its snapshot and never backwards, and the stream covers `lastSeq`. Returns the problems
 * found (empty when the stream is exact), so a failing spec prints all of them at once.
 */
export function sequenceProblems(
  items: readonly StreamItemOf[],
  afterSeq: number,
  lastSeq: number,
): string[] {
  const problems: string[] = [];
  let cursor = afterSeq;
  for (const [i, item] of items.entries()) {
    const event = eventOf(item);
    if (event !== undefined) {
      if (event.seq !== cursor + 1) problems.push(`item ${i}: seq ${event.seq} after ${cursor}`);
      cursor = event.seq;
    } else if (isReset(item)) {
      if (item.reset.snapshot.lastSeq < cursor)
        problems.push(`item ${i}: reset back to ${item.reset.snapshot.lastSeq} after ${cursor}`);
      cursor = item.reset.snapshot.lastSeq;
    } else {
      // Any other item (e.g. a signalled drop) means the race test overflowed: not expected.
      problems.push(`item ${i}: unexpected ${item.kind}`);
    }
  }
  if (cursor !== lastSeq) problems.push(`ends at ${cursor}, the stream is at ${lastSeq}`);
  return problems;
}
