import type { Observable } from 'rxjs';
import type {
  GeoPoint,
  MemoryUse,
  OrderEvent,
  OrderSnapshot,
  OrderStatus,
  OrderStatusChanged,
  TrackingUpdated,
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
   * The bus compares each order it serves with the store and backfills what it missed.
   */
  CatchUp = 'catch_up',
  /**
   * The backend lost its data (e.g. Redis restarted without persistence): seqs start
   * over, so the bus clears its rings and sends every subscriber an explicit reset.
   */
  DataLost = 'data_lost',
}

export interface PublishCommand {
  readonly orderId: string;
  readonly status: OrderStatus;
  /** Why the order is cancelled: only with `cancelled` (InvalidArgument otherwise). */
  readonly reason?: string;
  /** Filler bytes copied into the event, for payload-size experiments. */
  readonly paddingBytes?: number;
  /**
   * The customer a new order belongs to (kept on its snapshot as `ownerId`). Ignored when
   * the order already exists: ownership never changes.
   */
  readonly ownerId?: string;
  /**
   * Makes the publish idempotent: a repeat of the same key for the same order within the
   * store's idempotency window publishes nothing and answers the first publish's event
   * (same seq, same publishedAtUs; `isReplay()` tells it apart), so a client may retry
   * after a timeout without making a second event. A repeat with any other field (status,
   * reason, padding, the owner of the order it created) is an IdempotencyKeyReused. Callers scope the key to whoever sent it
   * (`scopedIdempotencyKey`); the store scopes it to the order.
   */
  readonly idempotencyKey?: string;
}

/** A tracking update to publish (see `OrderStore.publishTracking`). */
export interface TrackingCommand {
  readonly orderId: string;
  readonly location: GeoPoint;
  /** Estimated time of arrival, epoch ms. */
  readonly etaMs: number;
  /** Filler bytes copied into the event, for payload-size experiments. */
  readonly paddingBytes?: number;
  /**
   * As for a status change: a repeat within the window answers the first publish's event;
   * a repeat with another location, ETA or padding, or a key first used for a status
   * change, is an IdempotencyKeyReused.
   */
  readonly idempotencyKey?: string;
}

/** The part of an order the read check needs (`OrderSnapshot` has it). */
export interface OrderOwnership {
  readonly ownerId?: string;
}

/**
 * Where events are made and kept: assigns each order's next seq atomically, enforces the
 * life cycle and announces every published event on `events$`. The bus feeds from
 * `events$`; it never publishes itself. Implementations: the in-memory store (embedded
 * default) and a Redis store (several instances). Used as an abstract-class DI token.
 */
export abstract class OrderStore {
  /**
   * Every event published through this store (or, for a shared store, any instance):
   * status changes and tracking updates, in one seq sequence per order.
   */
  abstract readonly events$: Observable<OrderEvent>;

  /**
   * Publishes a status change and returns the event with its assigned seq.
   * @throws GatewayError FailedPrecondition for a transition the life cycle forbids (a
   *   repeated status included) or an idempotency key repeated with another request
   *   (IdempotencyKeyReused),
   *   NotFound when the order does not exist and the status is not `created`,
   *   InvalidArgument for a reason on another status than `cancelled`, Unavailable when
   *   the backing store is down.
   */
  abstract publish(cmd: PublishCommand): Promise<OrderStatusChanged>;

  /**
   * Publishes a tracking update (the order's next seq; its status stays).
   * @throws GatewayError FailedPrecondition unless the order accepts tracking
   *   (`acceptsTracking`), or for an idempotency key repeated with another request;
   *   NotFound for an unknown order; InvalidArgument for a location or ETA out of range;
   *   Unavailable when the backing store is down.
   */
  abstract publishTracking(cmd: TrackingCommand): Promise<TrackingUpdated>;

  /**
   * The same, synchronously, for a store that can (in-process): the simulator uses it at
   * tens of thousands of events per second, where an async publish costs promises,
   * microtasks and async-hook callbacks per event that the delivery path never needed.
   */
  publishSync?(cmd: PublishCommand): OrderStatusChanged;

  /** `publishTracking`, synchronously, for the same reason as `publishSync`. */
  publishTrackingSync?(cmd: TrackingCommand): TrackingUpdated;

  /** The order's current state, or undefined when it does not exist (or was evicted). */
  abstract getSnapshot(orderId: string): Promise<OrderSnapshot | undefined>;

  /**
   * Who owns the order, for the read check on every subscribe and every poll: its
   * `ownerId` (undefined for an order without an owner), or undefined when the order does
   * not exist. This default reads the snapshot; the in-process store answers from the
   * order's state without building one (a long-poll asks once per answer).
   */
  async getOwnership(orderId: string): Promise<OrderOwnership | undefined> {
    return this.getSnapshot(orderId);
  }

  /**
   * Events with seq > afterSeq from the store's own history, for resumes the bus's local
   * ring cannot serve; undefined when the store keeps no history that far back.
   */
  abstract readHistory(orderId: string, afterSeq: number): Promise<OrderEvent[] | undefined>;

  /**
   * Emitted by a shared store when its feed was interrupted and is back; emitted before
   * any event received after the interruption, so the bus can hold those until repaired.
   * A single-process store never emits (its feed cannot be interrupted).
   */
  readonly resync$?: Observable<StoreResync>;

  /**
   * Routing for a shared store: from when the returned promise resolves, `events$`
   * carries every later event of `orderId` (the bus calls it when the order's first local
   * subscriber arrives, before it reads the snapshot and history, so nothing published
   * in between is missed). A store without it delivers every order's events.
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
