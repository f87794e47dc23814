import { parseLongPollBody, type LongPollBody, type WireEvent } from '../wire-types';
import { integerField, leanEvent } from './lean-event';

const EVENTS_KEY = '"events":[';

/**
 * A long-poll answer read the lean way when it has the common shape (a flat array of
 * event objects, no reset or skipped); any other shape, or anything the lean reader
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

function flatBody(text: string, start: number): LongPollBody {
  const close = text.indexOf(']', start);
  if (close < 0) throw new TypeError('no end of events');
  const events: WireEvent[] = [];
  let i = start;
  while (i < close) {
    const end = text.indexOf('}', i);
    const nested = text.indexOf('{', i + 1);
    // Each element must be one flat object: `{...}` followed by `,` or the array's end.
    if (text.charCodeAt(i) !== 123 || end < 0 || end > close || (nested >= 0 && nested < end)) {
      throw new TypeError('not a flat event array');
    }
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
