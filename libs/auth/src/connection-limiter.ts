import { ErrorCode, GatewayError } from '@app/contracts';

/** @default 100 open streams (SSE, gRPC Subscribe, socket.io connections, long-poll holds) per principal */
export const DEFAULT_MAX_CONNECTIONS_PER_PRINCIPAL = 100;

/**
 * Retry advice when the limit is reached. A slot comes back only when one of the
 * principal's own streams closes, which the server cannot predict; a few seconds keeps
 * a client that reconnects in a loop from hammering the service.
 * @default 5_000 ms
 */
export const CONNECTION_LIMIT_RETRY_AFTER_MS = 5_000;

/**
 * Shared counts (Redis): how long an instance's counts outlive its last renewal, so the
 * slots of an instance that died come back at most this long after.
 * @default 30_000 ms
 */
export const DEFAULT_CONNECTION_LEASE_MS = 30_000;

/** Gives a slot back; idempotent. */
export type ReleaseSlot = () => void;

/**
 * Counts each principal's open streaming connections, across every transport, so one
 * customer (or one leaked token) cannot hold an unbounded share of the service. `max` 0
 * means unlimited (load tests).
 *
 * The DI token and the contract: `InMemoryConnectionLimiter` counts in this process (the
 * limit is per instance); the Redis one (`@app/redis-store`) counts across every
 * instance, with leases so that the slots of an instance that died expire.
 */
export abstract class ConnectionLimiter {
  abstract readonly max: number;

  /**
   * Takes a slot for `subject`; the returned function gives it back (idempotent). May
   * answer asynchronously (a count in a shared store).
   * @throws GatewayError ResourceExhausted when the subject already holds `max`,
   *   Unavailable when the shared count cannot be reached.
   */
  abstract acquire(subject: string): ReleaseSlot | Promise<ReleaseSlot>;

  /** Gives back what the limiter holds (timers, connections, its shared counts). */
  abstract close(): Promise<void>;
}

/** The refusal every limiter gives, with retry advice. */
export function connectionLimitExceeded(max: number): GatewayError {
  return new GatewayError(
    ErrorCode.ResourceExhausted,
    `at most ${max} open streams per principal`,
    CONNECTION_LIMIT_RETRY_AFTER_MS,
  );
}

export function assertValidMax(max: number): void {
  if (!Number.isInteger(max) || max < 0) throw new TypeError('max must be an integer >= 0');
}

/** In-process counts: synchronous, per instance. */
export class InMemoryConnectionLimiter extends ConnectionLimiter {
  private readonly open = new Map<string, number>();

  constructor(readonly max: number = DEFAULT_MAX_CONNECTIONS_PER_PRINCIPAL) {
    super();
    assertValidMax(max);
  }

  count(subject: string): number {
    return this.open.get(subject) ?? 0;
  }

  acquire(subject: string): ReleaseSlot {
    const n = this.count(subject);
    if (this.max > 0 && n >= this.max) throw connectionLimitExceeded(this.max);
    this.open.set(subject, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.count(subject) - 1;
      if (left <= 0) this.open.delete(subject);
      else this.open.set(subject, left);
    };
  }

  close(): Promise<void> {
    this.open.clear();
    return Promise.resolve();
  }
}
