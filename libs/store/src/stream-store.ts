import type { Observable } from 'rxjs';
import type {
  AppendOptions,
  AppendRule,
  DomainEvent,
  DomainSnapshot,
  EventDraft,
  MemoryUse,
  StreamDomain,
  TraceContext,
} from '@app/contracts';

/** Whether a store can serve publishes and reads right now (readiness probes read it). */
export type StoreHealth = 'up' | 'down';

/**
 * What a shared store tells the bus after it lost contact with its backend and got it
 * back, so the bus can repair what its feed missed meanwhile.
 */
export enum StoreResync {
  /**
   * The backend kept its data: events published while disconnected are in its history.
   * The bus compares each stream it serves with the store and backfills what it missed.
   */
  CatchUp = 'catch_up',
  /**
   * The backend lost its data (e.g. Redis restarted without persistence): seqs start
   * over, so the bus clears its rings and sends every subscriber an explicit reset.
   */
  DataLost = 'data_lost',
}

/** The part of a stream the read check needs (a domain's snapshot may carry it). */
export interface StreamOwnership {
  readonly ownerId?: string;
}

/**
 * Where a domain's events are made and kept: the generic append (each stream's next seq,
 * assigned atomically under the domain's rule), the feed of every published event
 * (`events$`), each stream's snapshot and history, and the routing of a shared store.
 * The bus feeds from it and never publishes; publishing is the domain's API on top of
 * `append` (`publishStatus` for the order domain, `publishPayload` for the payload one).
 * The service's DI token too: the engine's parts inject it as it is, a domain's module
 * under its own type arguments (a class token carries none).
 */
export abstract class StreamStore<
  E extends DomainEvent = DomainEvent,
  S extends DomainSnapshot = DomainSnapshot,
> {
  /** What the bus needs to know about the events on `events$` (kinds, terminal rule, fold). */
  abstract readonly domain: StreamDomain<E, S>;

  /**
   * Every event published through this store (or, for a shared store, any instance):
   * every kind, in one seq sequence per stream.
   */
  abstract readonly events$: Observable<E>;

  /**
   * Appends the domain's `draft` as the stream's next event under `rule` (the domain's:
   * `domain.append.rule(draft)`), atomically, and returns it with its seq; the options'
   * trace context travels beside the event to its deliveries (`traceContextOf`).
   * @throws GatewayError from `rule.refusal` when the stream does not exist and the rule
   *   does not create it, or is in a phase the rule does not follow; IdempotencyKeyReused
   *   for a key repeated with another request; Unavailable when the backing store is down.
   */
  abstract append(draft: EventDraft<E>, rule: AppendRule, options?: AppendOptions): Promise<E>;

  /**
   * The same, synchronously, for a store that can (in-process): the simulator uses it at
   * tens of thousands of events per second, where an async append costs promises,
   * microtasks and async-hook callbacks per event that the delivery path never needed.
   */
  appendSync?(draft: EventDraft<E>, rule: AppendRule, options?: AppendOptions): E;

  /**
   * The trace context `event` (one announced on `events$`) was published with; undefined
   * when it was published untraced, or by a store that does not carry trace contexts.
   */
  traceContextOf?(event: E): TraceContext | undefined;

  /** The stream's current state, or undefined when it does not exist (or was evicted). */
  abstract getSnapshot(orderId: string): Promise<S | undefined>;

  /**
   * The same, synchronously, for a store that holds its streams in process: the bus seeds
   * a channel that a later event makes again after its eviction from it, as the event is
   * delivered (the event alone lacks the stream's older kinds and its owner).
   */
  getSnapshotSync?(orderId: string): S | undefined;

  /**
   * Who owns the stream, for the read check on every subscribe and every poll: its
   * `ownerId` (undefined for a stream without an owner), or undefined when the stream
   * does not exist. This default reads the snapshot; the in-process store answers from
   * the stream's state without building one (a long-poll asks once per answer).
   */
  async getOwnership(orderId: string): Promise<StreamOwnership | undefined> {
    return this.getSnapshot(orderId);
  }

  /**
   * Events with seq > afterSeq from the store's own history, for resumes the bus's local
   * ring cannot serve; undefined when the store keeps no history that far back.
   */
  abstract readHistory(orderId: string, afterSeq: number): Promise<E[] | undefined>;

  /**
   * Emitted by a shared store when its feed was interrupted and is back; emitted before
   * any event received after the interruption, so the bus can hold those until repaired.
   * A single-process store never emits (its feed cannot be interrupted).
   */
  readonly resync$?: Observable<StoreResync>;

  /**
   * Routing for a shared store: from when the returned promise resolves, `events$`
   * carries every later event of `orderId` (the bus calls it when the stream's first
   * local subscriber arrives, before it reads the snapshot and history, so nothing
   * published in between is missed). A store without it delivers every stream's events.
   * @throws GatewayError Unavailable when the store cannot subscribe now.
   */
  watch?(orderId: string): Promise<void>;

  /** The bus no longer serves `orderId`: its events need not reach this instance. */
  unwatch?(orderId: string): void;

  /** Whether the store can serve requests now; a store without a backend is always up. */
  health?(): StoreHealth;

  /**
   * The structures clients can grow in this process, each bounded in bytes
   * (`order_memory_*`); a store that keeps them elsewhere (Redis) has none.
   */
  memoryUse?(): readonly MemoryUse[];

  /** Releases connections and timers; called once when the application shuts down. */
  close?(): void | Promise<void>;
}
