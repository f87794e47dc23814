import { WatchError } from './watch-error';

/**
 * @default 30 s: a watch that has never had a connection open ends after failing this
 * long (a wrong URL, an untrusted certificate, a refused Origin do not cure themselves)
 */
export const DEFAULT_GIVE_UP_BEFORE_FIRST_OPEN_MS = 30_000;

export interface GiveUpOptions {
  readonly maxAttempts?: number;
  readonly giveUpAfterMs?: number;
}

/** Throws a TypeError naming the option when a bound is not usable. */
export function validateGiveUp(o: GiveUpOptions): void {
  if (o.maxAttempts !== undefined && (!Number.isSafeInteger(o.maxAttempts) || o.maxAttempts < 1)) {
    throw new TypeError('maxAttempts must be an integer >= 1');
  }
  if (o.giveUpAfterMs !== undefined && !(o.giveUpAfterMs >= 0)) {
    throw new TypeError('giveUpAfterMs must be a number of ms >= 0 (Infinity: never)');
  }
}

/**
 * When a watch stops retrying: after `maxAttempts` failed attempts in a row, or after
 * failing for `giveUpAfterMs`, both counted since the watch started or its last
 * connection opened. Until a first connection opens the time bound defaults to
 * DEFAULT_GIVE_UP_BEFORE_FIRST_OPEN_MS; after it, a watch keeps resuming unless told.
 */
export class GiveUp {
  private attempts = 0;
  private since: number;
  private everOpened = false;

  constructor(
    private readonly opts: GiveUpOptions,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.since = now();
  }

  opened(): void {
    this.everOpened = true;
    this.attempts = 0;
  }

  /** One more failed attempt: the error to end the watch with, or undefined to retry. */
  failed(err: WatchError): WatchError | undefined {
    if (this.attempts === 0 && this.everOpened) this.since = this.now();
    this.attempts++;
    const limitMs =
      this.opts.giveUpAfterMs ??
      (this.everOpened ? Number.POSITIVE_INFINITY : DEFAULT_GIVE_UP_BEFORE_FIRST_OPEN_MS);
    const elapsedMs = this.now() - this.since;
    const tooMany = this.opts.maxAttempts !== undefined && this.attempts >= this.opts.maxAttempts;
    if (!tooMany && elapsedMs < limitMs) return undefined;
    const what = this.everOpened ? 'since the connection was lost' : 'without a connection';
    return new WatchError(
      err.code,
      `gave up after ${this.attempts} attempt(s) in ${Math.round(elapsedMs)} ms ${what}: ${err.message}`,
      err.retryAfterMs,
      err.status,
      err.network,
    );
  }
}
