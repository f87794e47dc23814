import type { TraceContext } from '@app/contracts';

/**
 * The trace context of each event a store announced, keyed by the event object itself:
 * an event that is dropped takes its entry with it, so the table needs no eviction.
 */
export class TraceContexts {
  private readonly byEvent = new WeakMap<object, TraceContext>();

  set(event: object, context: TraceContext): void {
    this.byEvent.set(event, context);
  }

  get(event: object): TraceContext | undefined {
    return this.byEvent.get(event);
  }
}
