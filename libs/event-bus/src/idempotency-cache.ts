import { LRUCache } from 'lru-cache';
import {
  assertMaxBytes,
  stringBytes,
  valueBytes,
  type MemoryBounded,
  type MemoryUse,
  type OrderEvent,
} from '@app/contracts';
import { DEFAULT_IDEMPOTENCY_WINDOW_MS } from './publish-replay';

/**
 * @default 33_554_432 bytes (32 MiB) of idempotency keys and their events per in-process
 * store: about 50,000 of the largest keys (128 characters, a 128-character subject, a
 * 64-character order id), far more of the usual UUIDs.
 */
export const DEFAULT_IDEMPOTENCY_MAX_BYTES = 32 * 1024 * 1024;

/**
 * What lru-cache keeps per entry besides the key and value strings: its Map slot, list
 * links, size and TTL arrays, the Entry object, and the joined key's cons string
 * (measured in idempotency-cache.spec.ts).
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
  /** Clock of the window, in ms, for tests. @default performance.now */
  now?: () => number;
}

/**
 * The in-process store's memory of idempotency keys: the event each key's publish made,
 * for `windowMs`, in an LRU bounded by bytes (lru-cache's `maxSize`). A key forgotten
 * early only weakens a retry (it would publish again), which is what a cache may do; a
 * forgotten key is counted in `order_memory_evictions_total{structure="idempotency_keys"}`.
 */
export class IdempotencyCache implements MemoryBounded {
  private readonly entries: LRUCache<string, OrderEvent>;
  private evictions = 0;
  readonly windowMs: number;
  readonly maxBytes: number;

  constructor(opts: IdempotencyCacheOptions = {}) {
    this.windowMs = opts.windowMs ?? DEFAULT_IDEMPOTENCY_WINDOW_MS;
    this.maxBytes = opts.maxBytes ?? DEFAULT_IDEMPOTENCY_MAX_BYTES;
    if (!Number.isInteger(this.windowMs) || this.windowMs < 1) {
      throw new TypeError('idempotency windowMs must be an integer >= 1');
    }
    assertMaxBytes('idempotency', this.maxBytes);
    this.entries = new LRUCache<string, OrderEvent>({
      ttl: this.windowMs,
      ...(opts.now ? { perf: { now: opts.now }, ttlResolution: 0 } : {}),
      maxSize: this.maxBytes,
      sizeCalculation: (event, key) => idempotencyEntryBytes(key, event),
      dispose: (_event, _key, reason) => {
        if (reason === 'evict') this.evictions++;
      },
    });
  }

  get size(): number {
    return this.entries.size;
  }

  /** The event remembered for `key` of `orderId`, while its window lasts. */
  get(orderId: string, key: string): OrderEvent | undefined {
    return this.entries.get(entryKey(orderId, key));
  }

  remember(key: string, event: OrderEvent): void {
    this.entries.set(entryKey(event.orderId, key), event);
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
}

/** Estimated bytes one remembered key costs: the joined key, the event, the LRU's slot. */
export function idempotencyEntryBytes(entryKey: string, event: OrderEvent): number {
  return IDEMPOTENCY_ENTRY_OVERHEAD_BYTES + stringBytes(entryKey) + valueBytes(event);
}

/** Order ids cannot contain a newline (ORDER_ID_PATTERN), so the pair cannot collide. */
function entryKey(orderId: string, key: string): string {
  return `${orderId}\n${key}`;
}
