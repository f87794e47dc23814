import type { BackoffOptions } from './types';

/** @default 250 ms: the first reconnect waits a random delay below this */
export const DEFAULT_BACKOFF_BASE_MS = 250;
/** @default 10_000 ms: the cap the doubling stops at */
export const DEFAULT_BACKOFF_MAX_MS = 10_000;

/**
 * Exponential backoff with full jitter (a uniformly random delay below
 * min(max, base * 2^attempt)), so clients that lost the same server do not come back in
 * step. When the server advised a delay, that is the delay: the service already spreads
 * its advice per client (graceful shutdown) or states its reconnection time (SSE
 * `retry:`), and knows better than a client-side guess.
 */
export class Backoff {
  private readonly baseMs: number;
  private readonly maxMs: number;
  private attempt = 0;

  constructor(
    opts: BackoffOptions = {},
    private readonly random: () => number = Math.random,
  ) {
    this.baseMs = opts.baseMs ?? DEFAULT_BACKOFF_BASE_MS;
    this.maxMs = opts.maxMs ?? DEFAULT_BACKOFF_MAX_MS;
    if (!(this.baseMs >= 0) || !(this.maxMs >= this.baseMs)) {
      throw new TypeError('backoff: need 0 <= baseMs <= maxMs');
    }
  }

  /** Failures since the last successful open. */
  get attempts(): number {
    return this.attempt;
  }

  /** The delay before the next attempt; each call counts one more failure. */
  next(advisedMs?: number): number {
    const cap = Math.min(this.maxMs, this.baseMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    if (advisedMs !== undefined && Number.isFinite(advisedMs) && advisedMs >= 0) return advisedMs;
    return Math.floor(this.random() * cap);
  }

  /** A connection opened: the next failure starts from the base again. */
  reset(): void {
    this.attempt = 0;
  }
}
