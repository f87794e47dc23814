/**
 * The W3C trace context (https://www.w3.org/TR/trace-context/) a publish hands the store
 * with its event, so whichever instance delivers the event can join the publish's trace.
 * Stores carry it beside the event, never inside it: the event's contract and the JSON
 * clients receive stay the same whether tracing is on or off.
 */
export interface TraceContext {
  /** The `traceparent` value: `00-<trace id>-<parent span id>-<flags>`. */
  readonly traceparent: string;
  /** The `tracestate` value, when the caller sent one. */
  readonly tracestate?: string;
}
