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
import { OrderStore, type PublishCommand } from './order-store';

/** @default 300_000 ms a finished order stays readable before it is forgotten */
export const DEFAULT_TERMINAL_RETENTION_MS = 300_000;

export interface InMemoryOrderStoreOptions {
  /** How long a delivered/cancelled order stays known. @default 300_000 */
  terminalRetentionMs?: number;
}

/**
 * The embedded default store: one process, no dependencies. It keeps only each order's
 * snapshot (history lives in the bus's replay rings), so memory grows with live orders,
 * and finished orders are forgotten after `terminalRetentionMs`.
 */
export class InMemoryOrderStore extends OrderStore {
  private readonly snapshots = new Map<string, OrderSnapshot>();
  private readonly published = new Subject<OrderStatusChanged>();
  private readonly forgetTimers = new Set<NodeJS.Timeout>();
  private readonly terminalRetentionMs: number;
  readonly events$: Observable<OrderStatusChanged> = this.published.asObservable();

  constructor(opts: InMemoryOrderStoreOptions = {}) {
    super();
    this.terminalRetentionMs = opts.terminalRetentionMs ?? DEFAULT_TERMINAL_RETENTION_MS;
  }

  async publish(cmd: PublishCommand): Promise<OrderStatusChanged> {
    return this.publishSync(cmd);
  }

  /** Synchronous publish for the in-process simulator (no promise per event). */
  publishSync({ orderId, status, paddingBytes, ownerId }: PublishCommand): OrderStatusChanged {
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
    if (isTerminalStatus(status)) this.forgetLater(orderId);
    this.published.next(event);
    return event;
  }

  async getSnapshot(orderId: string): Promise<OrderSnapshot | undefined> {
    return this.snapshots.get(orderId);
  }

  getSnapshotSync(orderId: string): OrderSnapshot | undefined {
    return this.snapshots.get(orderId);
  }

  async readHistory(): Promise<OrderStatusChanged[] | undefined> {
    return undefined;
  }

  get orderCount(): number {
    return this.snapshots.size;
  }

  close(): void {
    for (const t of this.forgetTimers) clearTimeout(t);
    this.forgetTimers.clear();
    this.published.complete();
  }

  private forgetLater(orderId: string): void {
    const timer = setTimeout(() => {
      this.forgetTimers.delete(timer);
      this.snapshots.delete(orderId);
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
