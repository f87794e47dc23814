import type { DomainEvent, TraceContext } from '@app/contracts';

/**
 * The record of one live event's fan-out on this instance (one per event, not per
 * subscriber, so a large fan-out costs a count per write, not a span per subscriber).
 */
export interface DeliveryTrace<E extends DomainEvent = DomainEvent> {
  /**
   * A subscriber on `transport` wrote `event` to its connection during the fan-out (an
   * item queued ahead of it may be written first: only this trace's own event counts).
   */
  written(transport: string, event: E): void;
  /** The fan-out is over: `subscribers` were offered the event. */
  end(subscribers: number): void;
}

/**
 * What the bus asks of tracing, once per live event it fans out (the service's
 * OpenTelemetry module implements it). Without one the bus does no tracing work at all.
 */
export interface DeliveryTracer<E extends DomainEvent = DomainEvent> {
  /**
   * The fan-out record of `event`, published with `context` (the store's, see
   * `StreamStore.traceContextOf`), or undefined when it is not traced (no context, or a
   * trace the publisher did not sample).
   */
  begin(event: E, context: TraceContext | undefined): DeliveryTrace<E> | undefined;
}
