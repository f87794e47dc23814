/** The parts of `window` / `navigator` this needs (absent in Node). */
interface OnlineHost {
  addEventListener(type: 'online' | 'offline', cb: () => void): void;
  removeEventListener(type: 'online' | 'offline', cb: () => void): void;
  navigator?: { onLine?: boolean };
}

function findHost(): OnlineHost | undefined {
  const g = globalThis as unknown as Partial<OnlineHost> & { window?: unknown };
  return g.window !== undefined && typeof g.addEventListener === 'function'
    ? (g as OnlineHost)
    : undefined;
}

/**
 * Browser connectivity: while the browser says it is offline, retrying only burns
 * battery and fills the console, so the watch drops its connection on `offline` and
 * waits for `online` (then resumes at once). In Node it is always online.
 */
export class OnlineWatcher {
  private readonly host = findHost();
  private waiters: (() => void)[] = [];
  private readonly onOnline = () => {
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  };
  private readonly onOffline = () => this.offlineHandler?.();

  constructor(
    enabled: boolean,
    private readonly offlineHandler: (() => void) | undefined,
  ) {
    if (!enabled) this.host = undefined;
    this.host?.addEventListener('online', this.onOnline);
    this.host?.addEventListener('offline', this.onOffline);
  }

  get online(): boolean {
    return this.host?.navigator?.onLine !== false;
  }

  /** Resolves when online (at once if already), or when `signal` aborts. */
  waitOnline(signal: AbortSignal): Promise<void> {
    if (this.online || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve();
      };
      this.waiters.push(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  close(): void {
    this.host?.removeEventListener('online', this.onOnline);
    this.host?.removeEventListener('offline', this.onOffline);
    this.onOnline();
  }
}
