import type { TraceContext } from '@app/contracts';

/**
 * How a publish's trace context travels with its event on an order's pub/sub channel:
 * before the event's JSON, one line each for `traceparent` and `tracestate` (empty when
 * none). An event's JSON starts with `{`, a traceparent with its version's hex digits, so
 * a message says which it is by its first character, and untraced messages stay the
 * event's JSON alone. The history and idempotency records keep the JSON alone: replays
 * are not deliveries of the publish.
 */
export function traceMessagePrefix(context: TraceContext | undefined): string {
  if (context === undefined) return '';
  const { traceparent, tracestate = '' } = context;
  // A line break would cut the message in the wrong place; such a context is not carried.
  if (/[\r\n]/.test(traceparent + tracestate) || traceparent.startsWith('{')) return '';
  return `${traceparent}\n${tracestate}\n`;
}

/** A message's event JSON and the trace context before it, if any (traceMessagePrefix). */
export function parseTraceMessage(message: string): {
  readonly json: string;
  readonly context?: TraceContext;
} {
  if (message.startsWith('{')) return { json: message };
  const first = message.indexOf('\n');
  const second = first < 0 ? -1 : message.indexOf('\n', first + 1);
  if (second < 0) return { json: message };
  const traceparent = message.slice(0, first);
  const tracestate = message.slice(first + 1, second);
  return {
    json: message.slice(second + 1),
    context: tracestate === '' ? { traceparent } : { traceparent, tracestate },
  };
}
