import type { DomainEvent, DomainSnapshot, StreamEndReason, StreamItemOf } from '@app/contracts';

/**
 * What a transport gives the bus to deliver one subscription. The bus calls it in order,
 * never concurrently, and stops writing while the transport is full.
 */
export interface DeliverySink<
  E extends DomainEvent = DomainEvent,
  S extends DomainSnapshot = DomainSnapshot,
> {
  /**
   * Writes one item. Returns false when the transport's buffer is full
   * (`res.write()`/`call.write()` returned false): the bus then waits for `onDrain`.
   */
  write(item: StreamItemOf<E, S>): boolean;
  /** Registers a one-shot callback for when the transport can take more. */
  onDrain(resume: () => void): void;
  /**
   * The bus ended the subscription (terminal status, overflow under `disconnect`, ...).
   * The subscription is already released; the transport closes its stream. When set,
   * `retryAfterMs` is the reconnect delay to advise the client (SSE `retry:`, socket.io
   * `end.retryAfterMs`): randomised per subscription at shutdown, so the clients of a
   * stopping instance do not all reconnect in the same instant.
   */
  end(reason: StreamEndReason, retryAfterMs?: number): void;
}
