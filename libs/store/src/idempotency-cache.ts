import { LRUCache } from 'lru-cache';
import {
  assertMaxBytes,
  stringBytes,
  valueBytes,
  type DomainEvent,
  type MemoryBounded,
  type MemoryUse,
} from '@app/contracts';
import { DEFAULT_IDEMPOTENCY_WINDOW_MS } from './publish-replay';

/**
 * @default 33_554_432 bytes (32 MiB) of idempotency keys and their events per in-process
 * store: about 50,000 of the largest keys (128 characters, a 128-character subject, a
 * 64-character order id), far more of the usual UUIDs.
 */
export const DEFAULT_IDEMPOTENCY_MAX_BYTES = 32 * 1024 * 1024;

/**
 * What lru-cache keeps per entry besides the key and the entry: its Map slot, list links
 * and size array, and the joined key's cons string (measured in idempotency-cache.spec.ts).
 */
export const IDEMPOTENCY_ENTRY_OVERHEAD_BYTES = 120;

/** The `structure` label of this cache in `order_memory_*`. */
export const IDEMPOTENCY_STRUCTURE = 'idempotency_keys';

export interface IdempotencyCacheOptions {
  /** How long a key is remembered, in ms. @default 300_000 */
  windowMs?: number;
  /**
   * Estimated bytes of keys and events kept (`idempotencyEntryBytes`); beyond it the
   * least recently used key is forgotten before its window ends, so memory stays bounded
   * whatever the publish rate and key sizes. @default DEFAULT_IDEMPOTENCY_MAX_BYTES
   */
  maxBytes?: number;
  /** Clock, in ms since the epoch, for tests. @default Date.now */
  now?: () => number;
}

interface Entry<E extends DomainEvent> {
  readonly event: E;
  readonly expiresAtMs: number;
}

/**
 * The in-process store's memory of idempotency keys: the event each key's publish made,
 * for `windowMs`, in an LRU bounded by bytes (lru-cache's `maxSize`). A key forgotten
 * early only weakens a retry (it would publish again), which is what a cache may do; a
 * forgotten key is counted in `order_memory_evictions_total{structure="idempotency_keys"}`.
 * Expired keys are dropped from the least recently used end as new ones arrive (amortized
 * O(1), no timer per key), so an idle window costs little for long.
 */
export class IdempotencyCache<E extends DomainEvent = DomainEvent> implements MemoryBounded {
  private readonly entries: LRUCache<string, Entry<E>>;
  private readonly now: () => number;
  private evictions = 0;
  readonly windowMs: number;
  readonly maxBytes: number;

  constructor(opts: IdempotencyCacheOptions = {}) {
    this.windowMs = opts.windowMs ?? DEFAULT_IDEMPOTENCY_WINDOW_MS;
    this.maxBytes = opts.maxBytes ?? DEFAULT_IDEMPOTENCY_MAX_BYTES;
    this.now = opts.now ?? Date.now;
    if (!Number.isInteger(this.windowMs) || this.windowMs < 1) {
      throw new TypeError('idempotency windowMs must be an integer >= 1');
    }
    assertMaxBytes('idempotency', this.maxBytes);
    this.entries = new LRUCache<string, Entry<E>>({
      maxSize: this.maxBytes,
      sizeCalculation: (entry, key) => idempotencyEntryBytes(key, entry.event),
      dispose: (_entry, _key, reason) => {
        if (reason === 'evict') this.evictions++;
      },
    });
  }

  get size(): number {
    return this.entries.size;
  }

  /** The event remembered for `key` of `orderId`, while its window lasts. */
  get(orderId: string, key: string): E | undefined {
    const entry = this.entries.get(entryKey(orderId, key));
    return entry && entry.expiresAtMs > this.now() ? entry.event : undefined;
  }

  remember(key: string, event: E): void {
    const now = this.now();
    this.sweep(now);
    this.entries.set(entryKey(event.orderId, key), { event, expiresAtMs: now + this.windowMs });
  }

  clear(): void {
    this.entries.clear();
  }

  get memoryUse(): MemoryUse {
    return {
      structure: IDEMPOTENCY_STRUCTURE,
      maxBytes: this.maxBytes,
      bytes: this.entries.calculatedSize,
      entries: this.entries.size,
      evictions: this.evictions,
      refusals: 0,
    };
  }

  /** Drops expired keys from the least recently used end, up to the first live one. */
  private sweep(now: number): void {
    const expired: string[] = [];
    for (const key of this.entries.rkeys()) {
      const entry = this.entries.peek(key);
      if (entry !== undefined && entry.expiresAtMs > now) break;
      expired.push(key);
    }
    // Deleted after the walk: lru-cache's iterators follow links a delete rewrites.
    for (const key of expired) this.entries.delete(key);
  }
}

/**
 * Estimated bytes one remembered key costs: the joined key, the entry and its event, the
 * LRU's slot.
 */
export function idempotencyEntryBytes<E extends DomainEvent>(entryKey: string, event: E): number {
  return (
    IDEMPOTENCY_ENTRY_OVERHEAD_BYTES +
    stringBytes(entryKey) +
    valueBytes({ event, expiresAtMs: Number.MAX_VALUE })
  );
}

/** Order ids cannot contain a newline (ORDER_ID_PATTERN), so the pair cannot collide. */
function entryKey(orderId: string, key: string): string {
  return `${orderId}\n${key}`;
}
