import { parseLongPollBody, type LongPollBody, type WireEvent } from '../wire-types';
import { integerField, leanEvent } from './lean-event';

const EVENTS_KEY = '"events":[';

/**
 * A long-poll answer read the lean way when it has the common shape (an array of event
 * objects, no reset or skipped); any other shape, or anything the lean reader
 * does not expect, goes to the full parser, which also decides what is malformed.
 */
export function leanLongPollBody(text: string): LongPollBody {
  const head = text.indexOf(EVENTS_KEY);
  if (head < 0 || text.includes('"reset"') || text.includes('"skipped"')) {
    return parseLongPollBody(text);
  }
  try {
    return flatBody(text, head + EVENTS_KEY.length);
  } catch {
    return parseLongPollBody(text);
  }
}

/**
 * The `}` closing the object opened at `start`, nested objects (a tracking update's
 * location) included. The service's strings hold no braces; a body whose strings do may
 * be cut wrongly here, and the caller then falls back to the full parser.
 */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let i = start;
  for (;;) {
    const open = text.indexOf('{', i);
    const close = text.indexOf('}', i);
    if (close < 0) throw new TypeError('no end of object');
    if (open >= 0 && open < close) {
      depth += 1;
      i = open + 1;
    } else {
      depth -= 1;
      i = close + 1;
      if (depth === 0) return close;
    }
  }
}

function flatBody(text: string, start: number): LongPollBody {
  const close = text.indexOf(']', start);
  if (close < 0) throw new TypeError('no end of events');
  const events: WireEvent[] = [];
  let i = start;
  while (i < close) {
    if (text.charCodeAt(i) !== 123) throw new TypeError('not an array of objects');
    const end = objectEnd(text, i);
    if (end > close) throw new TypeError('an element runs past the array');
    events.push(leanEvent(text, i, end + 1));
    i = end + 1;
    if (text.charCodeAt(i) === 44) i += 1;
  }
  return {
    events,
    reset: undefined,
    skipped: undefined,
    next: integerField(text, '"next":', close, text.length),
    completed: text.indexOf('"completed":true', close) >= 0,
  };
}
