import {
  defaultTextMapSetter,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanKind,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import { GatewayError, type TraceContext } from '@app/contracts';
import { ATTR_ERROR_CODE } from './span-attributes';

/**
 * Starts a span and gives it `attributes` only if it records. The samplers the service
 * offers (OTEL_TRACES_SAMPLER) decide on the trace id and the parent alone, so nothing is
 * lost by setting them after the decision, and an unsampled span skips the SDK's
 * validation of each value at the start (which a sampled span would pay twice); a sampler
 * that reads attributes would need them passed to `startSpan` instead.
 */
export function startRecorded(
  tracer: Tracer,
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  parent?: Context,
): Span {
  const span = tracer.startSpan(name, { kind }, parent);
  if (span.isRecording()) span.setAttributes(attributes);
  return span;
}

/**
 * Runs `body` inside `span`, synchronous or not: `done` reads its result into the span,
 * a throw or rejection marks it failed (after `onError`), and the span ends once, when
 * the body is over.
 */
export function within<T>(
  span: Span,
  body: () => T,
  done: (result: Awaited<T>) => void,
  onError?: () => void,
): T {
  const fail = (err: unknown): never => {
    onError?.();
    failed(span, err);
    span.end();
    throw err;
  };
  let result: T;
  try {
    result = body();
  } catch (err) {
    return fail(err);
  }
  if (!(result instanceof Promise)) {
    finish(span, () => done(result as Awaited<T>));
    return result;
  }
  return result.then((value: Awaited<T>) => {
    finish(span, () => done(value));
    return value;
  }, fail) as T;
}

/**
 * The spans whose store append is running, by the trace context the event carries. An
 * in-process store fans the event out inside its append, so the bus finds the span here
 * and records the fan-out on it: a `deliver` span nested in the same call would add only a
 * duration its parent already has, at the price of a span per event (EventDeliveryTracer).
 * Keys are the carrier objects themselves: a context that crossed Redis is a new object
 * and gets its `deliver` span.
 */
export class OpenSpans {
  private readonly spans = new WeakMap<TraceContext, Span>();

  constructor(private readonly propagator: TextMapPropagator) {}

  /** The span appending the event that carries `context`, while its append runs. */
  get(context: TraceContext): Span | undefined {
    return this.spans.get(context);
  }

  /**
   * Runs `append` inside `span` (a child of `parent`), handing it the span's trace context
   * to carry with the event; an unsampled span carries nothing, since its deliveries
   * would record nothing anyway, and ends as it began: a no-op.
   */
  around<T>(
    span: Span,
    parent: Context,
    append: (context: TraceContext | undefined) => T,
    done: (result: Awaited<T>) => void,
  ): T {
    // An unsampled span records nothing: the append runs as if untraced, without a closure.
    if (!span.isRecording()) return append(undefined);
    const carrier = carrierOf(this.propagator, trace.setSpan(parent, span));
    if (carrier === undefined) return within(span, () => append(undefined), done);
    // Forgotten when the append is over: a retained event keeps its carrier, not the span.
    const forget = () => this.spans.delete(carrier);
    this.spans.set(carrier, span);
    return within(
      span,
      () => append(carrier),
      (result) => {
        forget();
        done(result);
      },
      forget,
    );
  }
}

/** Runs `read` into the span, which ends whatever `read` does. */
function finish(span: Span, read: () => void): void {
  try {
    read();
  } finally {
    span.end();
  }
}

/** The W3C headers of `context`'s span: what the store carries with the event. */
function carrierOf(propagator: TextMapPropagator, context: Context): TraceContext | undefined {
  const headers: Record<string, string> = {};
  propagator.inject(context, headers, defaultTextMapSetter);
  const { traceparent, tracestate } = headers;
  if (traceparent === undefined) return undefined;
  return tracestate === undefined ? { traceparent } : { traceparent, tracestate };
}

/** Marks the span failed with the error and, for a refusal, its gateway code. */
function failed(span: Span, err: unknown): void {
  if (err instanceof GatewayError) span.setAttribute(ATTR_ERROR_CODE, err.code);
  if (err instanceof Error) span.recordException(err);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: err instanceof Error ? err.message : String(err),
  });
}
