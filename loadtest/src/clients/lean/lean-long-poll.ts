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

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const CLOSE_BRACKET = 93;
const COMMA = 44;

/**
 * Where the string opened by the quote at `start` ends (the index of its closing quote).
 * Strings are skipped whole so that braces or brackets inside them (a cancellation
 * reason, a payload) never cut an element: a wrong cut could read as a valid
 * but different batch and miscount seqs, which the load test must never do.
 */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote < 0) throw new TypeError('unterminated string');
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
    i = quote + 1;
  }
}

/** The `}` closing the object opened at `start`, nested objects (a tracking update's location) included. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(text, i);
    else if (c === OPEN_BRACE) depth += 1;
    else if (c === CLOSE_BRACE && --depth === 0) return i;
  }
  throw new TypeError('no end of object');
}

function flatBody(text: string, start: number): LongPollBody {
  const events: WireEvent[] = [];
  let i = start;
  while (text.charCodeAt(i) !== CLOSE_BRACKET) {
    if (text.charCodeAt(i) !== OPEN_BRACE) throw new TypeError('not an array of objects');
    const end = objectEnd(text, i);
    events.push(leanEvent(text, i, end + 1));
    i = end + 1;
    if (text.charCodeAt(i) === COMMA) i += 1;
    else if (text.charCodeAt(i) !== CLOSE_BRACKET) throw new TypeError('not an array of objects');
  }
  const close = i;
  return {
    events,
    reset: undefined,
    skipped: undefined,
    next: integerField(text, '"next":', close, text.length),
    completed: text.indexOf('"completed":true', close) >= 0,
  };
}
