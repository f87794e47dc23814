/**
 * Test doubles for the bus specs: a recording sink with controllable back-pressure, a
 * store whose history reads can be held open (to stage the replay/live race), and a
 * bounded wait. Not exported from the library's index.
 */
import { Subject, type Observable } from 'rxjs';
import {
  nowUs,
  OrderStatus,
  snapshotAfter,
  type OrderEvent,
  type OrderSnapshot,
  type OrderStatusChanged,
  type StreamEndReason,
  type StreamItem,
  type TrackingUpdated,
} from '@app/contracts';
import type { DeliverySink } from '../delivery-sink';
import {
  OrderStore,
  type PublishCommand,
  type StoreResync,
  type TrackingCommand,
} from '../order-store';

export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export function event(
  orderId: string,
  seq: number,
  status: OrderStatus = OrderStatus.Paid,
  publishedAtUs = 0,
): OrderStatusChanged {
  return { orderId, seq, status, publishedAtUs };
}

export function trackingEvent(
  orderId: string,
  seq: number,
  status: OrderStatus = OrderStatus.Shipped,
  publishedAtUs = 0,
): TrackingUpdated {
  return { orderId, seq, status, publishedAtUs, location: { lat: 1, lon: 2 }, etaMs: 3 };
}

/** Polls `condition` every few ms; rejects with `what` after `timeoutMs`. */
export async function waitFor(
  condition: () => boolean,
  what: string,
  timeoutMs = 2_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Lets every pending promise continuation run (one macrotask turn). */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A sink that records what it receives. `accept` decides each write's return value;
 * while a write has returned false and the drain callback has not fired, any further
 * write is recorded as a violation of the back-pressure contract.
 */
export class RecordingSink implements DeliverySink {
  readonly items: StreamItem[] = [];
  readonly ends: StreamEndReason[] = [];
  /** Writes that arrived while the sink was waiting for drain (must stay 0). */
  writesWhileFull = 0;
  /** Writes that arrived after end() (must stay 0). */
  writesAfterEnd = 0;
  accept: (item: StreamItem, index: number) => boolean = () => true;
  private drain?: () => void;

  write(item: StreamItem): boolean {
    if (this.drain !== undefined) this.writesWhileFull++;
    if (this.ends.length > 0) this.writesAfterEnd++;
    this.items.push(item);
    return this.accept(item, this.items.length - 1);
  }

  onDrain(resume: () => void): void {
    this.drain = resume;
  }

  end(reason: StreamEndReason): void {
    this.ends.push(reason);
  }

  get waitingForDrain(): boolean {
    return this.drain !== undefined;
  }

  /** Fires the pending drain callback, if any; returns whether there was one. */
  fireDrain(): boolean {
    const resume = this.drain;
    if (resume === undefined) return false;
    this.drain = undefined;
    resume();
    return true;
  }

  get seqs(): number[] {
    return this.items.flatMap((it) =>
      it.kind === 'event' ? [it.event.seq] : it.kind === 'tracking' ? [it.tracking.seq] : [],
    );
  }

  get resets(): StreamItem[] {
    return this.items.filter((it) => it.kind === 'reset');
  }
}

/**
 * An OrderStore with a full per-order history that enforces nothing but seq order.
 * History reads can be held (`holdHistory = true`): each call is then parked in
 * `pendingReads` until the test resolves it, which is how the specs stage the race
 * between a slow replay and live events. `hasHistory = false` models a store that keeps
 * none (like the in-memory store).
 */
export class ControlledStore extends OrderStore {
  private readonly subject = new Subject<OrderEvent>();
  readonly events$: Observable<OrderEvent> = this.subject.asObservable();
  /** Drive with `resyncs.next(...)` to model a shared store's reconnection. */
  readonly resyncs = new Subject<StoreResync>();
  readonly resync$: Observable<StoreResync> = this.resyncs.asObservable();
  /** Makes every history read and snapshot read reject (the backend is down). */
  failReads = false;
  readonly history = new Map<string, OrderEvent[]>();
  holdHistory = false;
  hasHistory = true;
  historyReads = 0;
  readonly pendingReads: {
    orderId: string;
    afterSeq: number;
    lastSeqAtCall: number;
    deferred: Deferred<OrderEvent[] | undefined>;
  }[] = [];

  async publish(cmd: PublishCommand): Promise<OrderStatusChanged> {
    return this.publishNow(cmd.orderId, cmd.status);
  }

  async publishTracking(cmd: TrackingCommand): Promise<TrackingUpdated> {
    return this.publishTrackingNow(cmd.orderId);
  }

  /** A tracking update with the order's last status (shipped when it has none). */
  publishTrackingNow(orderId: string): TrackingUpdated {
    const list = this.history.get(orderId) ?? [];
    const status = list.at(-1)?.status ?? OrderStatus.Shipped;
    return this.add(trackingEvent(orderId, list.length + 1, status, nowUs()));
  }

  /**
   * Assigns the next seq and announces the event synchronously, or, while `lagFeed` is
   * set, only records it (like a shared store whose notification has not arrived yet)
   * until `announce()`.
   */
  publishNow(orderId: string, status: OrderStatus = OrderStatus.Paid): OrderStatusChanged {
    const list = this.history.get(orderId) ?? [];
    return this.add(event(orderId, list.length + 1, status, nowUs()));
  }

  private add<E extends OrderEvent>(e: E): E {
    const list = this.history.get(e.orderId) ?? [];
    this.history.set(e.orderId, list);
    list.push(e);
    if (this.lagFeed) this.unannounced.push(e);
    else this.subject.next(e);
    return e;
  }

  lagFeed = false;
  private readonly unannounced: OrderEvent[] = [];

  /** Announces the events held back by `lagFeed`, in order. */
  announce(): void {
    for (const e of this.unannounced.splice(0)) this.subject.next(e);
  }

  /** Forgets the events held back by `lagFeed`: their notifications were lost. */
  dropUnannounced(): void {
    this.unannounced.splice(0);
  }

  /** Forgets everything, as a backend that restarted without persistence. */
  wipe(): void {
    this.history.clear();
    this.unannounced.splice(0);
  }

  /** Announces an arbitrary event (duplicates, gaps) without touching the history. */
  emitRaw(e: OrderEvent): void {
    this.subject.next(e);
  }

  lastSeq(orderId: string): number {
    return this.history.get(orderId)?.length ?? 0;
  }

  async getSnapshot(orderId: string): Promise<OrderSnapshot | undefined> {
    if (this.failReads) throw new Error('store down');
    const list = this.history.get(orderId);
    if (list === undefined || list.length === 0) return undefined;
    return list.reduce<OrderSnapshot | undefined>((s, e) => snapshotAfter(s, e), undefined);
  }

  readHistory(orderId: string, afterSeq: number): Promise<OrderEvent[] | undefined> {
    this.historyReads++;
    if (this.failReads) return Promise.reject(new Error('store down'));
    if (!this.holdHistory) return Promise.resolve(this.slice(orderId, afterSeq));
    const d = deferred<OrderEvent[] | undefined>();
    this.pendingReads.push({
      orderId,
      afterSeq,
      lastSeqAtCall: this.lastSeq(orderId),
      deferred: d,
    });
    return d.promise;
  }

  /** History after `afterSeq` as it stood when the store's last seq was `upTo`. */
  slice(orderId: string, afterSeq: number, upTo = Infinity): OrderEvent[] | undefined {
    if (!this.hasHistory) return undefined;
    return (this.history.get(orderId) ?? []).filter((e) => e.seq > afterSeq && e.seq <= upTo);
  }
}
