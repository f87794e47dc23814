import {
  defaultTextMapGetter,
  ROOT_CONTEXT,
  SpanKind,
  type Span,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import type { DomainEvent, TraceContext } from '@app/contracts';
import type { DeliveryTrace, DeliveryTracer } from '@app/event-bus';
import {
  ATTR_ORDER_ID,
  ATTR_SEQ,
  ATTR_SUBSCRIBERS,
  ATTR_TRANSPORT,
  ATTR_WRITES,
  EVENT_WRITE,
  SPAN_DELIVER,
} from './span-attributes';
import { startRecorded, type OpenSpans } from './span-scope';

/**
 * One `deliver` span per event per instance, a child of the publish's `store` span (from
 * the context the event carried through the store), with one `write` span event per
 * transport counting that transport's writes. Not a span per subscriber: with a fan-out
 * of thousands that would be thousands of spans per event, exported and stored, for
 * what a count says. A fan-out that runs inside the append of this process (the
 * in-memory store) is recorded on the appending span instead (OpenSpans). Events
 * published untraced or unsampled cost one WeakMap read.
 */
export class EventDeliveryTracer implements DeliveryTracer {
  constructor(
    private readonly tracer: Tracer,
    private readonly propagator: TextMapPropagator,
    private readonly appending: OpenSpans,
  ) {}

  begin(event: DomainEvent, context: TraceContext | undefined): DeliveryTrace | undefined {
    if (context === undefined) return undefined;
    const appending = this.appending.get(context);
    if (appending !== undefined) return new EventDelivery(appending, event, false);
    const parent = this.propagator.extract(ROOT_CONTEXT, context, defaultTextMapGetter);
    const span = startRecorded(
      this.tracer,
      SPAN_DELIVER,
      SpanKind.CONSUMER,
      { [ATTR_ORDER_ID]: event.orderId, [ATTR_SEQ]: event.seq },
      parent,
    );
    if (!span.isRecording()) return undefined;
    return new EventDelivery(span, event, true);
  }
}

/** The fan-out of one event: counts of writes by transport, then its own span ends. */
class EventDelivery implements DeliveryTrace {
  private readonly writes = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly span: Span,
    private readonly event: DomainEvent,
    /** False on the appending span, which its append ends. */
    private readonly ownsSpan: boolean,
  ) {}

  written(transport: string, event: DomainEvent): void {
    if (event !== this.event) return;
    this.total++;
    this.writes.set(transport, (this.writes.get(transport) ?? 0) + 1);
  }

  end(subscribers: number): void {
    for (const [transport, count] of this.writes) {
      this.span.addEvent(EVENT_WRITE, { [ATTR_TRANSPORT]: transport, [ATTR_WRITES]: count });
    }
    this.span.setAttributes({ [ATTR_SUBSCRIBERS]: subscribers, [ATTR_WRITES]: this.total });
    if (this.ownsSpan) this.span.end();
  }
}
