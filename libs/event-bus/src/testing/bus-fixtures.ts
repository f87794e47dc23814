/**
 * Test doubles for the bus specs, over the job domain (fixture-domain.ts): a recording
 * sink with controllable back-pressure, a store whose history reads can be held open (to
 * stage the replay/live race), the in-memory store over the job domain, and a bounded
 * wait. Not exported from the library's index.
 */
import { Subject, type Observable } from 'rxjs';
import {
  eventOf,
  isReset,
  nowUs,
  type EventDraft,
  type StreamDomain,
  type StreamEndReason,
  type StreamItemOf,
} from '@app/contracts';
import type { StateSource } from '../bounded-queue';
import type { DeliverySink } from '../delivery-sink';
import {
  InMemoryStreamStore,
  type InMemoryStreamStoreOptions,
} from '@app/store/in-memory-stream-store';
import { StreamStore, type StreamOwnership, type StoreResync } from '@app/store/stream-store';
import {
  JOB_DOMAIN,
  jobAfter,
  JobPhase,
  type JobEvent,
  type JobItem,
  type JobSnapshot,
  type PhaseChanged,
  type ProgressReported,
} from './fixture-domain';

/**
 * The state source of a queue a spec drives alone with phase changes only: with one kind
 * the newest event is the whole state (the owner aside), as a channel's state would say.
 */
export const PHASES_ONLY: StateSource<JobEvent, JobSnapshot> = {
  stateAt: (e) => jobAfter(undefined, e),
};

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

/** A phase change of job `orderId` (building unless said). */
export function event(
  orderId: string,
  seq: number,
  phase: JobPhase = JobPhase.Building,
  publishedAtUs = 0,
): PhaseChanged {
  return { orderId, seq, phase, publishedAtUs };
}

/** A progress report of job `orderId` (while building unless said). */
export function progressEvent(
  orderId: string,
  seq: number,
  phase: JobPhase = JobPhase.Building,
  publishedAtUs = 0,
  percent = 50,
): ProgressReported {
  return { orderId, seq, phase, publishedAtUs, percent };
}

/** Polls `condition` every few ms; rejects with `what` after `timeoutMs`. */
export async function waitFor(
  condition: () => boolean,
  what: string,
  timeoutMs = 2_000,
): Promise<void> {
  // The monotonic clock: a wall clock stepped while waiting must not end the wait early.
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline)
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
 * write is recorded as a violation of the back-pressure contract. It takes any domain's
 * items and records them as `I`, the items of the bus it is given to (the job's unless said).
 */
export class RecordingSink<I extends StreamItemOf = JobItem> implements DeliverySink {
  readonly items: I[] = [];
  readonly ends: StreamEndReason[] = [];
  /** Writes that arrived while the sink was waiting for drain (must stay 0). */
  writesWhileFull = 0;
  /** Writes that arrived after end() (must stay 0). */
  writesAfterEnd = 0;
  accept: (item: I, index: number) => boolean = () => true;
  private drain?: () => void;

  write(item: StreamItemOf): boolean {
    if (this.drain !== undefined) this.writesWhileFull++;
    if (this.ends.length > 0) this.writesAfterEnd++;
    this.items.push(item as I);
    return this.accept(item as I, this.items.length - 1);
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

  /** The seqs of the events received, of every kind. */
  get seqs(): number[] {
    return this.items.flatMap((it) => {
      const e = eventOf(it);
      return e === undefined ? [] : [e.seq];
    });
  }

  get resets(): I[] {
    return this.items.filter((it) => isReset(it));
  }
}

/**
 * A job store with a full per-job history that enforces nothing but seq order.
 * History reads can be held (`holdHistory = true`): each call is then parked in
 * `pendingReads` until the test resolves it, which is how the specs stage the race
 * between a slow replay and live events. `hasHistory = false` models a store that keeps
 * none (like the in-memory store).
 */
export class ControlledStore extends StreamStore<JobEvent, JobSnapshot> {
  /** A spec may run the bus over another domain's rules (the events stay job-shaped). */
  domain: StreamDomain<JobEvent, JobSnapshot> = JOB_DOMAIN;
  private readonly subject = new Subject<JobEvent>();
  readonly events$: Observable<JobEvent> = this.subject.asObservable();
  /** Drive with `resyncs.next(...)` to model a shared store's reconnection. */
  readonly resyncs = new Subject<StoreResync>();
  readonly resync$: Observable<StoreResync> = this.resyncs.asObservable();
  /** Makes every history read and snapshot read reject (the backend is down). */
  failReads = false;
  readonly history = new Map<string, JobEvent[]>();
  holdHistory = false;
  hasHistory = true;
  historyReads = 0;
  /** Each job's owner (set by the spec; a job without one has none), and the reads of it. */
  readonly owners = new Map<string, string>();
  ownershipReads = 0;
  readonly pendingReads: {
    orderId: string;
    afterSeq: number;
    lastSeqAtCall: number;
    deferred: Deferred<JobEvent[] | undefined>;
  }[] = [];

  /** Enforces nothing but seq order: the rule is ignored, the draft's kind is kept. */
  async append(draft: EventDraft<JobEvent>): Promise<JobEvent> {
    if ('percent' in draft) return this.publishProgressNow(draft.orderId);
    return this.publishNow(draft.orderId, draft.phase ?? JobPhase.Queued);
  }

  /** A progress report in the job's last phase (building when it has none). */
  publishProgressNow(orderId: string): ProgressReported {
    const list = this.history.get(orderId) ?? [];
    const phase = list.at(-1)?.phase ?? JobPhase.Building;
    return this.add(progressEvent(orderId, list.length + 1, phase, nowUs()));
  }

  /**
   * Assigns the next seq and announces the event synchronously, or, while `lagFeed` is
   * set, only records it (like a shared store whose notification has not arrived yet)
   * until `announce()`.
   */
  publishNow(orderId: string, phase: JobPhase = JobPhase.Building): PhaseChanged {
    const list = this.history.get(orderId) ?? [];
    return this.add(event(orderId, list.length + 1, phase, nowUs()));
  }

  private add<E extends JobEvent>(e: E): E {
    const list = this.history.get(e.orderId) ?? [];
    this.history.set(e.orderId, list);
    list.push(e);
    if (this.lagFeed) this.unannounced.push(e);
    else this.subject.next(e);
    return e;
  }

  lagFeed = false;
  private readonly unannounced: JobEvent[] = [];

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
  emitRaw(e: JobEvent): void {
    this.subject.next(e);
  }

  lastSeq(orderId: string): number {
    return this.history.get(orderId)?.length ?? 0;
  }

  /**
   * Holds every snapshot read's answer (as of the call) until `releaseSnapshots()`, as a
   * shared store's reply that is still on its way while its feed delivers.
   */
  holdSnapshots = false;
  private readonly heldSnapshots: (() => void)[] = [];

  async getSnapshot(orderId: string): Promise<JobSnapshot | undefined> {
    if (this.failReads) throw new Error('store down');
    const list = this.history.get(orderId);
    const ownerId = this.owners.get(orderId);
    const answer =
      list === undefined || list.length === 0
        ? undefined
        : list.reduce<JobSnapshot | undefined>((s, e) => jobAfter(s, e, ownerId), undefined);
    if (this.holdSnapshots) await new Promise<void>((resolve) => this.heldSnapshots.push(resolve));
    return answer;
  }

  /** Answers the snapshot reads held so far. */
  releaseSnapshots(): void {
    for (const resolve of this.heldSnapshots.splice(0)) resolve();
  }

  override async getOwnership(orderId: string): Promise<StreamOwnership | undefined> {
    this.ownershipReads++;
    if (this.failReads) throw new Error('store down');
    if (!this.history.has(orderId)) return undefined;
    const ownerId = this.owners.get(orderId);
    return ownerId === undefined ? {} : { ownerId };
  }

  readHistory(orderId: string, afterSeq: number): Promise<JobEvent[] | undefined> {
    this.historyReads++;
    if (this.failReads) return Promise.reject(new Error('store down'));
    if (!this.holdHistory) return Promise.resolve(this.slice(orderId, afterSeq));
    const d = deferred<JobEvent[] | undefined>();
    this.pendingReads.push({
      orderId,
      afterSeq,
      lastSeqAtCall: this.lastSeq(orderId),
      deferred: d,
    });
    return d.promise;
  }

  /** History after `afterSeq` as it stood when the store's last seq was `upTo`. */
  slice(orderId: string, afterSeq: number, upTo = Infinity): JobEvent[] | undefined {
    if (!this.hasHistory) return undefined;
    return (this.history.get(orderId) ?? []).filter((e) => e.seq > afterSeq && e.seq <= upTo);
  }
}

/**
 * The in-memory store over the job domain: its rules enforced, as in production. Typed
 * as the seam (`close` may be async), so the specs run the same on any store.
 */
export type InMemoryJobStore = StreamStore<JobEvent, JobSnapshot> &
  Required<Pick<StreamStore<JobEvent, JobSnapshot>, 'appendSync' | 'close'>>;

export function inMemoryJobStore(
  opts: Omit<InMemoryStreamStoreOptions, 'domain'> = {},
): InMemoryJobStore {
  return new InMemoryStreamStore({ ...opts, domain: JOB_DOMAIN });
}
