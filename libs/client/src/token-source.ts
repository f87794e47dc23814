/** @default 30 s: ask for a new token this long before the current one expires */
export const DEFAULT_REFRESH_BEFORE_EXPIRY_MS = 30_000;

/**
 * The `exp` claim of a JWT in epoch ms, or undefined for anything that is not a JWT
 * with a numeric `exp` (an opaque token is simply never refreshed ahead of time).
 * Decoded, not verified: the client only uses it to schedule a refresh.
 */
export function jwtExpiryMs(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const b64 = payload.replace(/-/g, '+').replace(/_/g, '/');
    const json = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

export interface TokenSourceOptions {
  readonly token?: string;
  readonly getToken?: () => string | Promise<string>;
  readonly refreshBeforeExpiryMs?: number;
  /** Called for every getToken() call (stats, status lines). */
  readonly onRefresh?: (reason: 'expiring' | 'expired' | 'refused') => void;
}

/**
 * The watch's current bearer token: asks getToken() ahead of the token's expiry (one
 * timer, cleared by stop()), after a stream ended with `token_expired`, and after a
 * refusal; concurrent asks share one call. `version` changes with every new token, so a
 * transport can tell that credentials it derived (a session cookie, a socket's
 * handshake) are stale.
 */
export class TokenSource {
  private token: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private pending: Promise<boolean> | undefined;
  private stopped = false;
  version = 0;

  constructor(private readonly opts: TokenSourceOptions) {
    this.token = opts.token;
  }

  get current(): string | undefined {
    return this.token;
  }

  get canRefresh(): boolean {
    return this.opts.getToken !== undefined;
  }

  /** Gets the first token when only getToken was given; arms the refresh timer. */
  async start(): Promise<void> {
    if (this.token === undefined && this.opts.getToken) await this.refresh('expiring');
    else this.schedule();
  }

  /** Asks getToken() (once for concurrent callers); true when the token changed. */
  refresh(reason: 'expiring' | 'expired' | 'refused'): Promise<boolean> {
    const get = this.opts.getToken;
    if (get === undefined || this.stopped) return Promise.resolve(false);
    this.pending ??= (async () => {
      try {
        this.opts.onRefresh?.(reason);
        const next = await get();
        if (this.stopped || typeof next !== 'string' || next === '') return false;
        const changed = next !== this.token;
        this.token = next;
        if (changed) this.version++;
        this.schedule();
        return changed;
      } finally {
        this.pending = undefined;
      }
    })();
    return this.pending;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const exp = this.token === undefined ? undefined : jwtExpiryMs(this.token);
    if (exp === undefined || !this.opts.getToken || this.stopped) return;
    const before = this.opts.refreshBeforeExpiryMs ?? DEFAULT_REFRESH_BEFORE_EXPIRY_MS;
    // Never sooner than a second from now: a token that is already close to its expiry
    // must not turn into a getToken() loop. setTimeout cannot wait longer than ~24.8 days.
    const delay = Math.min(Math.max(1_000, exp - before - Date.now()), 2_147_483_647);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // A failing getToken() here is not fatal: the stream ends with token_expired and
      // the watch asks again then.
      this.refresh('expiring').catch(() => undefined);
    }, delay);
  }
}
