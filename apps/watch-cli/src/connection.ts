import type { OrderStatusChanged, StreamReset, StreamSkipped } from '@app/contracts';

/** What one connection tells the watcher, in order. */
export interface StreamHandlers {
  /** The connection is up and subscribed. */
  opened(): void;
  event(e: OrderStatusChanged): void;
  reset(r: StreamReset): void;
  /** Events the server dropped because this client read too slowly (not an error). */
  skipped(s: StreamSkipped): void;
}

/** How one connection ended. */
export interface ConnectionEnd {
  /** `completed`: the order is finished, stop. Anything else: resume. */
  readonly reason: string;
  /** The server's reconnect advice (shutdown), in ms. */
  readonly retryAfterMs?: number;
}

/**
 * One connection to the service, subscribed after `afterSeq()` (read at connect time):
 * resolves when the stream ends, rejects when it fails (refused, dropped, HTTP error).
 * `signal` aborts it (Ctrl-C).
 */
export type Connect = (
  afterSeq: number,
  handlers: StreamHandlers,
  signal: AbortSignal,
) => Promise<ConnectionEnd>;
