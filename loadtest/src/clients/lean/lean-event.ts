import type { WireEvent } from '../wire-types';

/**
 * Reads the three fields the load test measures (orderId, seq, publishedAtUs) out of one
 * event's JSON without building the whole object: at thousands of events a second the
 * generator's JSON.parse of every field (payload included) used to be the generator's
 * largest cost, and a saturated generator puts its own loop delay into the latency it
 * measures. The service is still not trusted: a missing or malformed field throws, as
 * the full parse did, and the caller counts it as a malformed frame.
 *
 * `from`/`to` bound the object inside a larger text (an SSE chunk, a long-poll body),
 * so the caller does not have to slice it out first.
 */
export function leanEvent(text: string, from = 0, to = text.length): WireEvent {
  return {
    orderId: stringField(text, '"orderId":"', from, to),
    seq: integerField(text, '"seq":', from, to),
    publishedAtUs: integerField(text, '"publishedAtUs":', from, to),
  };
}

function keyAt(text: string, key: string, from: number, to: number): number {
  const at = text.indexOf(key, from);
  if (at < 0 || at + key.length > to) throw new TypeError(`malformed event: no ${key}`);
  return at + key.length;
}

/** A non-negative integer (seq, epoch microseconds: both below 2^53). */
export function integerField(text: string, key: string, from: number, to: number): number {
  let i = keyAt(text, key, from, to);
  let n = 0;
  const start = i;
  for (; i < to; i += 1) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) break;
    n = n * 10 + c;
  }
  const next = i < to ? text.charCodeAt(i) : -1;
  // A number must end the value: `,` or `}` (no fraction, exponent or sign here).
  if (i === start || (next !== 44 && next !== 125) || n > Number.MAX_SAFE_INTEGER) {
    throw new TypeError(`malformed event: ${key} is not an integer`);
  }
  return n;
}

/** A string value; an escape inside it falls back to JSON's own decoding. */
function stringField(text: string, key: string, from: number, to: number): string {
  const start = keyAt(text, key, from, to);
  const end = text.indexOf('"', start);
  if (end < 0 || end >= to) throw new TypeError(`malformed event: ${key} is not a string`);
  const raw = text.slice(start, end);
  if (!raw.includes('\\')) return raw;
  // An escaped quote ended the scan early: let JSON find the real end.
  const m = /^"(?:[^"\\]|\\.)*"/.exec(text.slice(start - 1, to));
  if (!m) throw new TypeError(`malformed event: ${key} is not a string`);
  return JSON.parse(m[0]) as string;
}
