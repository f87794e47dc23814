import type { ThrottlerStorage } from '@nestjs/throttler';
import {
  ByteBudget,
  ErrorCode,
  GatewayError,
  stringBytes,
  type MemoryBounded,
  type MemoryUse,
} from '@app/contracts';

/** What @nestjs/throttler's `ThrottlerStorage.increment` resolves to. */
export type ThrottlerRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** A window's state as the throttler's record, which counts in whole seconds. */
export function throttlerRecord(
  hits: number,
  windowLeftMs: number,
  blocked: boolean,
  blockLeftMs: number,
): ThrottlerRecord {
  return {
    totalHits: hits,
    timeToExpire: Math.ceil(windowLeftMs / 1000),
    isBlocked: blocked,
    timeToBlockExpire: blocked ? Math.ceil(blockLeftMs / 1000) : 0,
  };
}

/**
 * @default 8_388_608 bytes (8 MiB) of rate windows in one process: about 24,000
 * principals with the longest subject (128 characters) inside one window at once.
 */
export const DEFAULT_RATE_WINDOWS_MAX_BYTES = 8 * 1024 * 1024;
/**
 * What one window costs besides its key: the Map slot, the entry object and its two
 * timestamps (measured in rate-windows.spec.ts).
 */
export const RATE_WINDOW_ENTRY_OVERHEAD_BYTES = 200;
/** The `structure` label of the in-process rate windows in `order_memory_*`. */
export const RATE_WINDOWS_STRUCTURE = 'rate_windows';

interface Window {
  hits: number;
  windowEndsMs: number;
  blockEndsMs: number;
  readonly bytes: number;
}

export interface RateWindowsOptions {
  /** Estimated bytes of windows kept (`rateWindowBytes`). @default DEFAULT_RATE_WINDOWS_MAX_BYTES */
  maxBytes?: number;
  /** Clock, for tests. @default Date.now */
  now?: () => number;
}

/**
 * @nestjs/throttler's storage in this process, bounded in bytes: a fixed window with a
 * block per key, exactly as the Redis one (RATE_LIMIT_SCRIPT) counts, with one counter
 * per key where @nestjs/throttler's own in-memory storage keeps a timestamp per hit.
 *
 * At the bound a new key is refused (ResourceExhausted, retry when the oldest window
 * ends) instead of a live window being forgotten: forgetting one would hand its principal
 * a fresh allowance, which is what the limit exists to prevent.
 */
export class InMemoryRateWindows implements ThrottlerStorage, MemoryBounded {
  /** Ordered by when each window (or block) started, which is close to expiry order. */
  private readonly windows = new Map<string, Window>();
  private readonly budget: ByteBudget;
  private readonly now: () => number;

  constructor(opts: RateWindowsOptions = {}) {
    this.budget = new ByteBudget(
      RATE_WINDOWS_STRUCTURE,
      opts.maxBytes ?? DEFAULT_RATE_WINDOWS_MAX_BYTES,
    );
    this.now = opts.now ?? Date.now;
  }

  get memoryUse(): MemoryUse {
    return this.budget.memoryUse;
  }

  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerRecord> {
    // An executor that throws rejects, as the Redis storage's failures do.
    return new Promise((resolve) => {
      const now = this.now();
      this.sweep(now);
      const id = `${throttlerName}:${key}`;
      const w = this.windowOf(id, now);
      if (w.windowEndsMs <= now) {
        w.hits = 0;
        w.windowEndsMs = now + ttl;
        this.touch(id, w);
      }
      w.hits++;
      if (w.blockEndsMs <= now && w.hits > limit) {
        w.blockEndsMs = now + blockDuration;
        this.touch(id, w);
      }
      const blocked = w.blockEndsMs > now;
      resolve(throttlerRecord(w.hits, w.windowEndsMs - now, blocked, w.blockEndsMs - now));
    });
  }

  /** Forgets every window; nothing else to give back (no timers). */
  close(): void {
    this.windows.clear();
    this.budget.reset();
  }

  private windowOf(id: string, now: number): Window {
    const known = this.windows.get(id);
    if (known !== undefined) return known;
    const bytes = rateWindowBytes(id);
    if (!this.budget.tryReserve(bytes)) throw this.full(now);
    const w: Window = { hits: 0, windowEndsMs: 0, blockEndsMs: 0, bytes };
    this.windows.set(id, w);
    return w;
  }

  /** Moves a window that starts again to the back, keeping the Map close to expiry order. */
  private touch(id: string, w: Window): void {
    this.windows.delete(id);
    this.windows.set(id, w);
  }

  /**
   * Forgets ended windows from the oldest on, up to the first live one: amortized O(1). A
   * window behind a longer block waits for it, at most one block duration.
   */
  private sweep(now: number): void {
    for (const [id, w] of this.windows) {
      if (Math.max(w.windowEndsMs, w.blockEndsMs) > now) return;
      this.windows.delete(id);
      this.budget.release(w.bytes);
    }
  }

  private full(now: number): GatewayError {
    const oldest = this.windows.values().next();
    const endsMs = oldest.done
      ? now
      : Math.max(oldest.value.windowEndsMs, oldest.value.blockEndsMs);
    return new GatewayError(
      ErrorCode.ResourceExhausted,
      'too many principals inside a rate window on this instance; retry later',
      Math.max(1_000, endsMs - now),
    );
  }
}

/** Estimated bytes one key's window holds: its key and the fixed entry. */
export function rateWindowBytes(id: string): number {
  return RATE_WINDOW_ENTRY_OVERHEAD_BYTES + stringBytes(id);
}
