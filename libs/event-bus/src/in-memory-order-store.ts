import type { Observable } from 'rxjs';
import {
  acceptsTracking,
  ErrorCode,
  GatewayError,
  isTerminalStatus,
  nowUs,
  OrderStatus,
  parseStatusReason,
  parseTracking,
  trackingRefusal,
  transitionRefusal,
  type MemoryUse,
  type OrderEvent,
  type OrderSnapshot,
  type OrderStatusChanged,
  type TrackingUpdated,
} from '@app/contracts';
import { DEFAULT_RING_MAX_AGE_MS, DEFAULT_RING_SIZE } from './bus-options';
import { EventFeed } from './event-feed';
import { IdempotencyCache } from './idempotency-cache';
import { OrderState } from './order-state';
import {
  OrderStore,
  type OrderOwnership,
  type PublishCommand,
  type TrackingCommand,
} from './order-store';
import { replayOf, replayTrackingOf } from './publish-replay';
import { ReplayRing } from './replay-ring';

/** @default 300_000 ms a finished order stays readable before it is forgotten */
export const DEFAULT_TERMINAL_RETENTION_MS = 300_000;

export interface InMemoryOrderStoreOptions {
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
export class InMemoryOrderStore extends OrderStore {
  /** Each order's state; its snapshot is built when read (OrderState), not per event. */
  private readonly states = new Map<string, OrderState>();
  private readonly history = new Map<string, ReplayRing>();
  private readonly historySize: number;
  private readonly historyMaxAgeMs: number;
  private readonly published = new EventFeed<OrderEvent>();
  private readonly forgetTimers = new Set<NodeJS.Timeout>();
  private readonly terminalRetentionMs: number;
  private readonly idempotency: IdempotencyCache;
  readonly events$: Observable<OrderEvent> = this.published.observable;

  constructor(opts: InMemoryOrderStoreOptions = {}) {
    super();
    this.terminalRetentionMs = opts.terminalRetentionMs ?? DEFAULT_TERMINAL_RETENTION_MS;
    this.historySize = opts.historySize ?? DEFAULT_RING_SIZE;
    this.historyMaxAgeMs = opts.historyMaxAgeMs ?? DEFAULT_RING_MAX_AGE_MS;
    this.idempotency = new IdempotencyCache({
      windowMs: opts.idempotencyWindowMs,
      maxBytes: opts.idempotencyMaxBytes,
    });
  }

  async publish(cmd: PublishCommand): Promise<OrderStatusChanged> {
    return this.publishSync(cmd);
  }

  /** Synchronous publish for the in-process simulator (no promise per event). */
  publishSync(cmd: PublishCommand): OrderStatusChanged {
    const { orderId, status, paddingBytes, ownerId, idempotencyKey } = cmd;
    const reason = parseStatusReason(status, cmd.reason);
    if (idempotencyKey !== undefined) {
      const original = this.idempotency.get(orderId, idempotencyKey);
      if (original !== undefined) {
        return replayOf(original, { ...cmd, reason }, this.states.get(orderId)?.ownerId);
      }
    }
    const current = this.states.get(orderId);
    const currentStatus = current?.status;
    if (currentStatus === undefined && status !== OrderStatus.Created) throw notFound(orderId);
    const refusal =
      currentStatus !== undefined ? transitionRefusal(orderId, currentStatus, status) : undefined;
    if (refusal !== undefined) throw new GatewayError(ErrorCode.FailedPrecondition, refusal);
    // Key order is the JSON's field order on every transport (the Redis store writes the
    // same): the fields every kind shares first.
    const event: OrderStatusChanged = {
      orderId,
      seq: (current?.lastSeq ?? 0) + 1,
      status,
      ...(currentStatus !== undefined ? { previousStatus: currentStatus } : {}),
      publishedAtUs: nowUs(),
      ...(reason !== undefined ? { reason } : {}),
      ...(paddingBytes ? { padding: paddingOf(paddingBytes) } : {}),
    };
    // The owner is fixed at creation and carried over on every later status.
    this.record(event, ownerId, idempotencyKey);
    if (isTerminalStatus(status)) this.forgetLater(orderId);
    this.published.next(event);
    return event;
  }

  async publishTracking(cmd: TrackingCommand): Promise<TrackingUpdated> {
    return this.publishTrackingSync(cmd);
  }

  /** Synchronous tracking publish for the in-process simulator. */
  publishTrackingSync(cmd: TrackingCommand): TrackingUpdated {
    const { orderId, paddingBytes, idempotencyKey } = cmd;
    const { location, etaMs } = parseTracking(cmd.location, cmd.etaMs);
    if (idempotencyKey !== undefined) {
      const original = this.idempotency.get(orderId, idempotencyKey);
      if (original !== undefined) {
        return replayTrackingOf(original, { location, etaMs, paddingBytes });
      }
    }
    const current = this.states.get(orderId);
    const status = current?.status;
    if (current === undefined || status === undefined) throw notFound(orderId);
    if (!acceptsTracking(status)) {
      throw new GatewayError(ErrorCode.FailedPrecondition, trackingRefusal(orderId, status));
    }
    const event: TrackingUpdated = {
      orderId,
      seq: current.lastSeq + 1,
      status,
      publishedAtUs: nowUs(),
      location,
      etaMs,
      ...(paddingBytes ? { padding: paddingOf(paddingBytes) } : {}),
    };
    this.record(event, undefined, idempotencyKey);
    this.published.next(event);
    return event;
  }

  /**
   * Applies a published event to the order's state, history and idempotency record.
   * `ownerId` is taken when the order is first known: the owner is fixed at creation and
   * carried over on every later event.
   */
  private record(event: OrderEvent, ownerId: string | undefined, idempotencyKey?: string): void {
    let state = this.states.get(event.orderId);
    if (state === undefined) {
      state = new OrderState(undefined, ownerId);
      this.states.set(event.orderId, state);
    }
    state.apply(event);
    this.historyOf(event.orderId).push(event);
    if (idempotencyKey !== undefined) this.idempotency.remember(idempotencyKey, event);
  }

  async getSnapshot(orderId: string): Promise<OrderSnapshot | undefined> {
    return this.states.get(orderId)?.snapshot();
  }

  getSnapshotSync(orderId: string): OrderSnapshot | undefined {
    return this.states.get(orderId)?.snapshot();
  }

  /** The order's state itself: it carries the owner, and nothing is built to answer. */
  override async getOwnership(orderId: string): Promise<OrderOwnership | undefined> {
    return this.states.get(orderId);
  }

  async readHistory(orderId: string, afterSeq: number): Promise<OrderEvent[] | undefined> {
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

  private historyOf(orderId: string): ReplayRing {
    let ring = this.history.get(orderId);
    if (ring === undefined) {
      ring = new ReplayRing(this.historySize, this.historyMaxAgeMs);
      this.history.set(orderId, ring);
    }
    return ring;
  }

  private forgetLater(orderId: string): void {
    const timer = setTimeout(() => {
      this.forgetTimers.delete(timer);
      this.states.delete(orderId);
      this.history.delete(orderId);
    }, this.terminalRetentionMs);
    timer.unref();
    this.forgetTimers.add(timer);
  }
}

function notFound(orderId: string): GatewayError {
  return new GatewayError(
    ErrorCode.NotFound,
    `order ${orderId} does not exist; it must be published as created first`,
  );
}

let lastPadding = '';

/**
 * Filler strings are shared while their size stays the same (a simulator schedule uses
 * one size): every retained event (replay ring) would otherwise keep its own copy for
 * the collector to copy. Strings are immutable, so sharing is
 * invisible to readers; one cached size keeps the cache itself bounded.
 */
function paddingOf(bytes: number): string {
  if (lastPadding.length !== bytes) lastPadding = 'x'.repeat(bytes);
  return lastPadding;
}
