import type { Observable } from 'rxjs';
import {
  nowUs,
  type AppendOptions,
  type AppendRule,
  type DomainAppend,
  type DomainEvent,
  type DomainSnapshot,
  type EventDraft,
  type MemoryUse,
  type StreamDomain,
  type TraceContext,
} from '@app/contracts';
import { DEFAULT_RING_MAX_AGE_MS, DEFAULT_RING_SIZE } from '@app/event-bus/bus-options';
import { EventFeed } from './event-feed';
import { IdempotencyCache } from './idempotency-cache';
import { StreamState } from '@app/event-bus/stream-state';
import { StreamStore, type StreamOwnership } from './stream-store';
import { eventOf } from './append-event';
import { replayOf } from './publish-replay';
import { TraceContexts } from './trace-context';
import { ReplayRing } from '@app/event-bus/replay-ring';

/** @default 300_000 ms a finished order stays readable before it is forgotten */
export const DEFAULT_TERMINAL_RETENTION_MS = 300_000;

export interface InMemoryStreamStoreOptions<
  E extends DomainEvent = DomainEvent,
  S extends DomainSnapshot = DomainSnapshot,
> {
  /** The domain of the events it keeps (it must have `append`): the store is typed by it. */
  domain: StreamDomain<E, S>;
  /** How long a delivered/cancelled order stays known. @default 300_000 */
  terminalRetentionMs?: number;
  /** Events kept per order for resume. @default DEFAULT_RING_SIZE (256) */
  historySize?: number;
  /** Oldest event age kept for resume, in ms. @default DEFAULT_RING_MAX_AGE_MS (300_000) */
  historyMaxAgeMs?: number;
  /** How long a publish's idempotency key is remembered, in ms. @default 300_000 */
  idempotencyWindowMs?: number;
  /**
   * Estimated bytes of idempotency keys and their events remembered (the least recently
   * used go first). @default DEFAULT_IDEMPOTENCY_MAX_BYTES (32 MiB)
   */
  idempotencyMaxBytes?: number;
}

/**
 * The embedded default store: one process, no dependencies. It keeps each order's
 * snapshot and its last `historySize` events (the history resumes are served from once
 * the bus has let go of an order nobody follows), so memory grows with live orders, and
 * finished orders are forgotten after `terminalRetentionMs`.
 */
export class InMemoryStreamStore<
  E extends DomainEvent = DomainEvent,
  S extends DomainSnapshot = DomainSnapshot,
> extends StreamStore<E, S> {
  readonly domain: StreamDomain<E, S>;
  /** How the domain's events are appended (its rules come with each append). */
  private readonly appending: DomainAppend<E, S>;
  /** Each order's state; its snapshot is built when read (StreamState), not per event. */
  private readonly states = new Map<string, StreamState<E, S>>();
  /** Each stream's phase, as the rules of its events set it (`AppendRule.phase`). */
  private readonly phases = new Map<string, string>();
  private readonly history = new Map<string, ReplayRing<E>>();
  private readonly historySize: number;
  private readonly historyMaxAgeMs: number;
  private readonly published = new EventFeed<E>();
  private readonly forgetTimers = new Set<NodeJS.Timeout>();
  private readonly terminalRetentionMs: number;
  private readonly idempotency: IdempotencyCache<E>;
  private readonly traces = new TraceContexts();
  readonly events$: Observable<E> = this.published.observable;

  constructor(opts: InMemoryStreamStoreOptions<E, S>) {
    super();
    this.domain = opts.domain;
    if (this.domain.append === undefined) {
      throw new TypeError(`the ${this.domain.name} domain cannot be appended to (no append)`);
    }
    this.appending = this.domain.append;
    this.terminalRetentionMs = opts.terminalRetentionMs ?? DEFAULT_TERMINAL_RETENTION_MS;
    this.historySize = opts.historySize ?? DEFAULT_RING_SIZE;
    this.historyMaxAgeMs = opts.historyMaxAgeMs ?? DEFAULT_RING_MAX_AGE_MS;
    this.idempotency = new IdempotencyCache<E>({
      windowMs: opts.idempotencyWindowMs,
      maxBytes: opts.idempotencyMaxBytes,
    });
  }

  async append(draft: EventDraft<E>, rule: AppendRule, options?: AppendOptions): Promise<E> {
    return this.appendSync(draft, rule, options);
  }

  /** Synchronous append for the in-process simulator (no promise per event). */
  appendSync(draft: EventDraft<E>, rule: AppendRule, options: AppendOptions = {}): E {
    const { orderId } = draft;
    const { ownerId, idempotencyKey, traceContext } = options;
    const current = this.states.get(orderId);
    if (idempotencyKey !== undefined) {
      const original = this.idempotency.get(orderId, idempotencyKey);
      if (original !== undefined) {
        return replayOf(original, draft, rule.priorPhaseField, ownerId, current?.ownerId);
      }
    }
    const phase = this.phases.get(orderId);
    if (current === undefined ? !rule.creates : !follows(rule, phase)) {
      throw rule.refusal(orderId, phase);
    }
    const event = eventOf(
      draft,
      (current?.lastSeq ?? 0) + 1,
      rule,
      this.appending.phaseField,
      current !== undefined ? phase : undefined,
      nowUs(),
    );
    // The owner is fixed at creation and carried over on every later event.
    this.record(event, ownerId, idempotencyKey);
    if (rule.phase !== undefined) this.phases.set(orderId, rule.phase);
    if (rule.ends) this.forgetLater(orderId);
    if (traceContext !== undefined) this.traces.set(event, traceContext);
    this.published.next(event);
    return event;
  }

  /**
   * Applies a published event to the order's state, history and idempotency record.
   * `ownerId` is taken when the order is first known: the owner is fixed at creation and
   * carried over on every later event.
   */
  private record(event: E, ownerId: string | undefined, idempotencyKey?: string): void {
    let state = this.states.get(event.orderId);
    if (state === undefined) {
      state = new StreamState(this.domain, undefined, ownerId);
      this.states.set(event.orderId, state);
    }
    state.apply(event);
    this.historyOf(event.orderId).push(event);
    if (idempotencyKey !== undefined) this.idempotency.remember(idempotencyKey, event);
  }

  override traceContextOf(event: E): TraceContext | undefined {
    return this.traces.get(event);
  }

  async getSnapshot(orderId: string): Promise<S | undefined> {
    return this.states.get(orderId)?.snapshot();
  }

  override getSnapshotSync(orderId: string): S | undefined {
    return this.states.get(orderId)?.snapshot();
  }

  /** The order's state itself: it carries the owner, and nothing is built to answer. */
  override async getOwnership(orderId: string): Promise<StreamOwnership | undefined> {
    return this.states.get(orderId);
  }

  async readHistory(orderId: string, afterSeq: number): Promise<E[] | undefined> {
    return this.history.get(orderId)?.after(afterSeq, nowUs());
  }

  /** The idempotency keys' share of memory, for `order_memory_*`. */
  override memoryUse(): readonly MemoryUse[] {
    return [this.idempotency.memoryUse];
  }

  get orderCount(): number {
    return this.states.size;
  }

  close(): void {
    for (const t of this.forgetTimers) clearTimeout(t);
    this.forgetTimers.clear();
    this.published.complete();
  }

  private historyOf(orderId: string): ReplayRing<E> {
    let ring = this.history.get(orderId);
    if (ring === undefined) {
      ring = new ReplayRing<E>(this.historySize, this.historyMaxAgeMs);
      this.history.set(orderId, ring);
    }
    return ring;
  }

  private forgetLater(orderId: string): void {
    const timer = setTimeout(() => {
      this.forgetTimers.delete(timer);
      this.states.delete(orderId);
      this.phases.delete(orderId);
      this.history.delete(orderId);
    }, this.terminalRetentionMs);
    timer.unref();
    this.forgetTimers.add(timer);
  }
}

/** Whether an existing stream in `phase` takes an event under `rule`. */
function follows(rule: AppendRule, phase: string | undefined): boolean {
  return rule.follows === undefined || (phase !== undefined && rule.follows.includes(phase));
}
