import { Backoff } from './backoff';

/** @default 30 s: ask for a new token this long before the current one expires */
export const DEFAULT_REFRESH_BEFORE_EXPIRY_MS = 30_000;

/**
 * A token is used for at least this share of its lifetime before it is renewed, so a
 * token shorter than `refreshBeforeExpiryMs` is renewed once per lifetime, not at once.
 */
export const MIN_TOKEN_USE_FRACTION = 2 / 3;

/** Never renew sooner than this after a token arrived, whatever its claims say. */
export const MIN_REFRESH_DELAY_MS = 1_000;

/** setTimeout cannot wait longer than 2^31 - 1 ms (about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

interface JwtTimes {
  /** `exp` in epoch ms. */
  readonly expMs: number;
  /** `iat` in epoch ms, when the token has a numeric one. */
  readonly iatMs?: number;
}

/**
 * The `exp` (and `iat`) claims of a JWT in epoch ms, or undefined for anything that is
 * not a JWT with a numeric `exp` (an opaque token is simply never refreshed ahead).
 * Decoded, not verified: the client only uses it to schedule a refresh.
 */
function jwtTimes(token: string): JwtTimes | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const b64 = payload.replace(/-/g, '+').replace(/_/g, '/');
    const json = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    const { exp, iat } = JSON.parse(json) as { exp?: unknown; iat?: unknown };
    if (typeof exp !== 'number' || !Number.isFinite(exp)) return undefined;
    return typeof iat === 'number' && Number.isFinite(iat)
      ? { expMs: exp * 1000, iatMs: iat * 1000 }
      : { expMs: exp * 1000 };
  } catch {
    return undefined;
  }
}

/** The `exp` claim of a JWT in epoch ms (see jwtTimes). */
export function jwtExpiryMs(token: string): number | undefined {
  return jwtTimes(token)?.expMs;
}

export type RefreshReason = 'expiring' | 'expired' | 'refused';

/** What a getToken() call gave: a new token, the same one, or a failure (it threw). */
export type RefreshResult = 'changed' | 'unchanged' | 'failed';

/** Who hears a token source's calls and changes (every watch of a shared source). */
export interface TokenListener {
  /** Called for every getToken() call (stats, status lines). */
  readonly onRefresh?: (reason: RefreshReason) => void;
  /** Called after every token change (a transport may renew its connection). */
  readonly onChange?: () => void;
}

export interface TokenSourceOptions extends TokenListener {
  readonly token?: string;
  readonly getToken?: () => string | Promise<string>;
  readonly refreshBeforeExpiryMs?: number;
  /** Retry delays after a getToken() that threw, for the refresh ahead of expiry. */
  readonly backoff?: Backoff;
}

/**
 * The watch's current bearer token: asks getToken() ahead of the token's expiry (one
 * timer, cleared by stop()), after a stream ended with `token_expired`, and after a
 * refusal; concurrent asks share one call. A getToken() that throws is a transient
 * failure: the call says `failed` (the error in `lastError`) and the refresh ahead is
 * tried again after a backoff delay. `version` changes with every new token, so a
 * transport can tell that credentials it derived (a session cookie, a socket's
 * handshake) are stale. One source may serve many watches (a client's, see `listen`):
 * one renewal then moves them all, with one getToken() call.
 */
export class TokenSource {
  private token: string | undefined;
  private readonly listeners = new Set<TokenListener>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private pending: Promise<RefreshResult> | undefined;
  private stopped = false;
  private readonly retry: Backoff;
  version = 0;
  /** What the last getToken() call threw, if it threw. */
  lastError: unknown;

  constructor(private readonly opts: TokenSourceOptions) {
    this.token = opts.token;
    this.retry = opts.backoff ?? new Backoff();
    this.listeners.add(opts);
  }

  /** Adds a listener beside the options' own; returns its removal. */
  listen(listener: TokenListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get current(): string | undefined {
    return this.token;
  }

  get canRefresh(): boolean {
    return this.opts.getToken !== undefined;
  }

  /** Only getToken was given and it has not yet given a token. */
  get missing(): boolean {
    return this.token === undefined && this.opts.getToken !== undefined;
  }

  /** Arms the refresh timer for the token given up front. */
  start(): void {
    this.schedule();
  }

  /** Asks getToken() (once for concurrent callers). */
  refresh(reason: RefreshReason): Promise<RefreshResult> {
    const get = this.opts.getToken;
    if (get === undefined || this.stopped) return Promise.resolve('unchanged');
    if (this.pending !== undefined) return this.pending;
    // Cleared once settled, not inside ask(): a getToken() that throws synchronously
    // settles ask() before `pending` is even assigned.
    const pending = this.ask(get, reason);
    this.pending = pending;
    void pending.then(() => {
      if (this.pending === pending) this.pending = undefined;
    });
    return pending;
  }

  private async ask(
    get: () => string | Promise<string>,
    reason: RefreshReason,
  ): Promise<RefreshResult> {
    try {
      for (const l of [...this.listeners]) l.onRefresh?.(reason);
      const next = await get();
      if (this.stopped) return 'unchanged';
      if (typeof next !== 'string' || next === '') throw new TypeError('getToken() gave no token');
      this.lastError = undefined;
      this.retry.reset();
      const changed = next !== this.token;
      this.token = next;
      this.schedule();
      if (changed) {
        this.version++;
        for (const l of [...this.listeners]) l.onChange?.();
      }
      return changed ? 'changed' : 'unchanged';
    } catch (err) {
      this.lastError = err;
      return 'failed';
    }
  }

  stop(): void {
    this.stopped = true;
    this.clear();
  }

  private clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Renews `refreshBeforeExpiryMs` before `exp`, but never before the token has served
   * MIN_TOKEN_USE_FRACTION of its lifetime (from `iat`, else from now), and never sooner
   * than MIN_REFRESH_DELAY_MS: a short or nearly expired token is renewed once, not in
   * a loop. A token already past its `exp` is left to the refusal path.
   */
  private schedule(): void {
    this.clear();
    const times = this.token === undefined ? undefined : jwtTimes(this.token);
    if (times === undefined || !this.opts.getToken || this.stopped) return;
    const now = Date.now();
    const lifetimeMs = times.expMs - Math.min(times.iatMs ?? now, now);
    if (times.expMs <= now || lifetimeMs <= 0) return;
    const before = this.opts.refreshBeforeExpiryMs ?? DEFAULT_REFRESH_BEFORE_EXPIRY_MS;
    const leadMs = Math.min(before, lifetimeMs * (1 - MIN_TOKEN_USE_FRACTION));
    this.arm(Math.max(MIN_REFRESH_DELAY_MS, Math.floor(times.expMs - leadMs - now)));
  }

  private arm(delayMs: number): void {
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.refresh('expiring').then((r) => {
          if (r === 'failed' && !this.stopped && this.timer === undefined) {
            this.arm(this.retry.next());
          }
        });
      },
      Math.min(delayMs, MAX_TIMER_MS),
    );
  }
}
