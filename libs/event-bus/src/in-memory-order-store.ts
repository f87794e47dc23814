import { Subject, type Observable } from 'rxjs';
import {
  canTransition,
  ErrorCode,
  GatewayError,
  isTerminalStatus,
  nowUs,
  type OrderSnapshot,
  type OrderStatusChanged,
} from '@app/contracts';
import { DEFAULT_RING_MAX_AGE_MS, DEFAULT_RING_SIZE } from './bus-options';
import { IdempotencyCache } from './idempotency-cache';
import { OrderStore, type PublishCommand } from './order-store';
import { replayOf } from './publish-replay';
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
  /** Most idempotency keys remembered (the oldest go first). @default 100_000 */
  idempotencyMaxKeys?: number;
}

/**
 * The embedded default store: one process, no dependencies. It keeps each order's
 * snapshot and its last `historySize` events (the history resumes are served from once
 * the bus has let go of an order nobody follows), so memory grows with live orders, and
 * finished orders are forgotten after `terminalRetentionMs`.
 */
export class InMemoryOrderStore extends OrderStore {
  private readonly snapshots = new Map<string, OrderSnapshot>();
  private readonly history = new Map<string, ReplayRing>();
  private readonly historySize: number;
  private readonly historyMaxAgeMs: number;
  private readonly published = new Subject<OrderStatusChanged>();
  private readonly forgetTimers = new Set<NodeJS.Timeout>();
  private readonly terminalRetentionMs: number;
  private readonly idempotency: IdempotencyCache;
  readonly events$: Observable<OrderStatusChanged> = this.published.asObservable();

  constructor(opts: InMemoryOrderStoreOptions = {}) {
    super();
    this.terminalRetentionMs = opts.terminalRetentionMs ?? DEFAULT_TERMINAL_RETENTION_MS;
    this.historySize = opts.historySize ?? DEFAULT_RING_SIZE;
    this.historyMaxAgeMs = opts.historyMaxAgeMs ?? DEFAULT_RING_MAX_AGE_MS;
    this.idempotency = new IdempotencyCache({
      windowMs: opts.idempotencyWindowMs,
      maxKeys: opts.idempotencyMaxKeys,
    });
  }

  async publish(cmd: PublishCommand): Promise<OrderStatusChanged> {
    return this.publishSync(cmd);
  }

  /** Synchronous publish for the in-process simulator (no promise per event). */
  publishSync(cmd: PublishCommand): OrderStatusChanged {
    const { orderId, status, paddingBytes, ownerId, idempotencyKey } = cmd;
    if (idempotencyKey !== undefined) {
      const original = this.idempotency.get(orderId, idempotencyKey);
      if (original !== undefined) return replayOf(original, status);
    }
    const current = this.snapshots.get(orderId);
    if (!canTransition(current?.status, status)) {
      throw new GatewayError(
        current ? ErrorCode.FailedPrecondition : ErrorCode.NotFound,
        current
          ? `order ${orderId} cannot move from ${current.status} to ${status}`
          : `order ${orderId} does not exist; it must be published as created first`,
      );
    }
    const event: OrderStatusChanged = {
      orderId,
      seq: (current?.lastSeq ?? 0) + 1,
      status,
      publishedAtUs: nowUs(),
      ...(paddingBytes ? { padding: paddingOf(paddingBytes) } : {}),
    };
    // The owner is fixed at creation and carried over on every later status.
    const owner = current ? current.ownerId : ownerId;
    this.snapshots.set(orderId, {
      orderId,
      status,
      lastSeq: event.seq,
      updatedAtUs: event.publishedAtUs,
      ...(owner !== undefined ? { ownerId: owner } : {}),
    });
    this.historyOf(orderId).push(event);
    if (isTerminalStatus(status)) this.forgetLater(orderId);
    if (idempotencyKey !== undefined) this.idempotency.remember(idempotencyKey, event);
    this.published.next(event);
    return event;
  }

  async getSnapshot(orderId: string): Promise<OrderSnapshot | undefined> {
    return this.snapshots.get(orderId);
  }

  getSnapshotSync(orderId: string): OrderSnapshot | undefined {
    return this.snapshots.get(orderId);
  }

  async readHistory(orderId: string, afterSeq: number): Promise<OrderStatusChanged[] | undefined> {
    return this.history.get(orderId)?.after(afterSeq, nowUs());
  }

  get orderCount(): number {
    return this.snapshots.size;
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
      this.snapshots.delete(orderId);
      this.history.delete(orderId);
    }, this.terminalRetentionMs);
    timer.unref();
    this.forgetTimers.add(timer);
  }
}

let lastPadding = '';

/**
 * Filler strings are shared while their size stays the same (a simulator schedule uses
 * one size): every retained event (replay ring) would otherwise keep its own copy, which
 * the load test's scale steps pay for in GC. Strings are immutable, so sharing is
 * invisible to readers; one cached size keeps the cache itself bounded.
 */
function paddingOf(bytes: number): string {
  if (lastPadding.length !== bytes) lastPadding = 'x'.repeat(bytes);
  return lastPadding;
}
