import type { OrderEvent } from '@app/contracts';
import { DEFAULT_IDEMPOTENCY_WINDOW_MS } from './publish-replay';

/** @default 100_000 keys remembered at most by one in-process store */
export const DEFAULT_IDEMPOTENCY_MAX_KEYS = 100_000;

export interface IdempotencyCacheOptions {
  /** How long a key is remembered, in ms. @default 300_000 */
  windowMs?: number;
  /**
   * Most keys kept; beyond it the oldest is forgotten before its window ends, so memory
   * stays bounded whatever the publish rate. @default 100_000
   */
  maxKeys?: number;
}

interface Entry {
  readonly event: OrderEvent;
  readonly expiresAtMs: number;
}

/**
 * The in-process store's memory of idempotency keys: the event each key's publish made,
 * for `windowMs`. Every entry lives equally long, so insertion order is expiry order and
 * expired entries are dropped from the front of the Map as new ones arrive (amortized
 * O(1), no timer per key).
 */
export class IdempotencyCache {
  private readonly entries = new Map<string, Entry>();
  readonly windowMs: number;
  readonly maxKeys: number;

  constructor(opts: IdempotencyCacheOptions = {}) {
    this.windowMs = opts.windowMs ?? DEFAULT_IDEMPOTENCY_WINDOW_MS;
    this.maxKeys = opts.maxKeys ?? DEFAULT_IDEMPOTENCY_MAX_KEYS;
    if (!Number.isInteger(this.windowMs) || this.windowMs < 1) {
      throw new TypeError('idempotency windowMs must be an integer >= 1');
    }
    if (!Number.isInteger(this.maxKeys) || this.maxKeys < 1) {
      throw new TypeError('idempotency maxKeys must be an integer >= 1');
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** The event remembered for `key` of `orderId`, while its window lasts. */
  get(orderId: string, key: string): OrderEvent | undefined {
    const entry = this.entries.get(entryKey(orderId, key));
    return entry && entry.expiresAtMs > Date.now() ? entry.event : undefined;
  }

  remember(key: string, event: OrderEvent): void {
    const now = Date.now();
    this.sweep(now);
    const k = entryKey(event.orderId, key);
    this.entries.delete(k); // re-inserted at the back: its window starts now
    this.entries.set(k, { event, expiresAtMs: now + this.windowMs });
    if (this.entries.size > this.maxKeys) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
  }

  clear(): void {
    this.entries.clear();
  }

  private sweep(now: number): void {
    for (const [k, entry] of this.entries) {
      if (entry.expiresAtMs > now) return;
      this.entries.delete(k);
    }
  }
}

/** Order ids cannot contain a newline (ORDER_ID_PATTERN), so the pair cannot collide. */
function entryKey(orderId: string, key: string): string {
  return `${orderId}\n${key}`;
}
