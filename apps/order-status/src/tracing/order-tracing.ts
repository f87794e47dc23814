import {
  defaultTextMapGetter,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Attributes,
  type Context,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { TracerProvider } from '@opentelemetry/sdk-trace';
import type { DomainEvent, TraceContext } from '@app/contracts';
import type { DeliveryTracer } from '@app/event-bus';
import { isReplay } from '@app/store';
import type { TracingConfig } from '../config/tracing-config';
import { EventDeliveryTracer } from './delivery-tracer';
import {
  ATTR_EVENT_KIND,
  ATTR_ORDER_ID,
  ATTR_PUBLISH_API,
  ATTR_REPLAY,
  ATTR_SEQ,
  ATTR_STORE,
  SPAN_PUBLISH,
  SPAN_STORE,
  TRACER_NAME,
} from './span-attributes';
import { OpenSpans, startRecorded, within } from './span-scope';
import type { PublishApi, PublishOrigin } from './trace-headers';
import { createTracerProvider } from './tracer-provider';

/** What a publish is, for its spans. */
export interface PublishTarget {
  readonly orderId: string;
  /** The event kind a publish makes (`status`, `tracking`, `payload`). */
  readonly kind: string;
}

/**
 * The store step of a traced publish: runs `append` (the store's publish, handed the
 * trace context to carry with the event) inside the `store` span.
 */
export type StoreStep = <E extends DomainEvent>(
  append: (context: TraceContext | undefined) => Promise<E>,
) => Promise<E>;

/** The store step of an untraced publish: the store's publish, and nothing else. */
const UNTRACED_STORE: StoreStep = (append) => append(undefined);

const propagator = new W3CTraceContextPropagator();

/**
 * OpenTelemetry for the service: a `publish` span per publish (a child of the caller's
 * `traceparent`), a `store` span around the store's append, whose context the event
 * carries through the store, and a `deliver` span per event and instance (see
 * EventDeliveryTracer). Off (the default), every method runs its work directly: no span
 * objects, no context lookups, and the bus gets no tracer at all.
 */
export class OrderTracing {
  /** The bus's hook, once per fanned-out event; undefined when tracing is off. */
  readonly delivery: DeliveryTracer | undefined;
  private readonly tracer: Tracer | undefined;
  /** The spans whose append is running, by the context the event carries (OpenSpans). */
  private readonly appending = new OpenSpans(propagator);

  /** Prefer `fromConfig`; the provider is this instance's (undefined: tracing off). */
  constructor(
    private readonly provider: TracerProvider | undefined,
    /** `memory`, `redis` or `redis-cluster`: the `store` span's attribute. */
    private readonly storeKind: string,
  ) {
    this.tracer = provider?.getTracer(TRACER_NAME);
    this.delivery = this.tracer
      ? new EventDeliveryTracer(this.tracer, propagator, this.appending)
      : undefined;
  }

  /** Tracing as configured: off when `config` is undefined (OTEL_* unset). */
  static fromConfig(config: TracingConfig | undefined, storeKind: string): OrderTracing {
    return new OrderTracing(config && createTracerProvider(config), storeKind);
  }

  get enabled(): boolean {
    return this.tracer !== undefined;
  }

  /**
   * Runs one publish (`run`, which calls the StoreStep it is handed around the store's
   * append) inside a `publish` span of kind server, a child of the caller's trace context.
   */
  publish<E extends DomainEvent>(
    origin: PublishOrigin | undefined,
    target: PublishTarget,
    run: (store: StoreStep) => Promise<E>,
  ): Promise<E> {
    const tracer = this.tracer;
    if (tracer === undefined) return run(UNTRACED_STORE);
    const parent = origin
      ? propagator.extract(ROOT_CONTEXT, origin, defaultTextMapGetter)
      : ROOT_CONTEXT;
    const span = startRecorded(
      tracer,
      SPAN_PUBLISH,
      SpanKind.SERVER,
      publishAttributes(target, origin?.api ?? 'rest'),
      parent,
    );
    const context = trace.setSpan(parent, span);
    return within(
      span,
      () => run((append) => this.storeStep(tracer, context, target, append)),
      (event) => span.setAttribute(ATTR_SEQ, event.seq),
    );
  }

  /**
   * The same for a synchronous publish (the in-process simulator): a root `publish` span
   * per event that is also its store step, so a traced load test prices tracing as
   * production would see it.
   */
  publishSync<E extends DomainEvent | undefined>(
    target: PublishTarget,
    append: (context: TraceContext | undefined) => E,
  ): E {
    const tracer = this.tracer;
    if (tracer === undefined) return append(undefined);
    const span = startRecorded(tracer, SPAN_PUBLISH, SpanKind.INTERNAL, {
      ...publishAttributes(target, 'simulator'),
      [ATTR_STORE]: this.storeKind,
    });
    return this.appending.around(span, ROOT_CONTEXT, append, (event) => {
      if (event !== undefined) span.setAttribute(ATTR_SEQ, event.seq);
    });
  }

  /**
   * Exports what is still batched and stops the exporter, waiting at most `timeoutMs`
   * (graceful shutdown's budget): an unreachable collector must not hold the exit.
   */
  async shutdown(timeoutMs: number): Promise<void> {
    if (this.provider === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    try {
      await Promise.race([this.provider.shutdown().catch(() => undefined), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private storeStep<E extends DomainEvent>(
    tracer: Tracer,
    parent: Context,
    target: PublishTarget,
    append: (context: TraceContext | undefined) => Promise<E>,
  ): Promise<E> {
    const span = startRecorded(
      tracer,
      SPAN_STORE,
      SpanKind.INTERNAL,
      { [ATTR_ORDER_ID]: target.orderId, [ATTR_STORE]: this.storeKind },
      parent,
    );
    return this.appending.around(span, parent, append, (event) =>
      span.setAttributes({ [ATTR_SEQ]: event.seq, [ATTR_REPLAY]: isReplay(event) }),
    );
  }
}

/** A publish span's attributes before its event exists. */
function publishAttributes(target: PublishTarget, api: PublishApi): Attributes {
  return {
    [ATTR_ORDER_ID]: target.orderId,
    [ATTR_EVENT_KIND]: target.kind,
    [ATTR_PUBLISH_API]: api,
  };
}
