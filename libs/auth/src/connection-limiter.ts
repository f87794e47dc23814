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
 * Counts each principal's open streaming connections, across every transport, so one
 * customer (or one leaked token) cannot hold an unbounded share of the server. In-process:
 * the limit is per instance. `max` 0 means unlimited (load tests).
 */
export class ConnectionLimiter {
  private readonly open = new Map<string, number>();

  constructor(readonly max: number = DEFAULT_MAX_CONNECTIONS_PER_PRINCIPAL) {
    if (!Number.isInteger(max) || max < 0) throw new TypeError('max must be an integer >= 0');
  }

  count(subject: string): number {
    return this.open.get(subject) ?? 0;
  }

  /**
   * Takes a slot for `subject`; the returned function gives it back (idempotent).
   * @throws GatewayError ResourceExhausted when the subject already holds `max`.
   */
  acquire(subject: string): () => void {
    const n = this.count(subject);
    if (this.max > 0 && n >= this.max) {
      throw new GatewayError(
        ErrorCode.ResourceExhausted,
        `at most ${this.max} open streams per principal`,
        CONNECTION_LIMIT_RETRY_AFTER_MS,
      );
    }
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
}
