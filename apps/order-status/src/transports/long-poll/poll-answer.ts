import type { FastifyReply } from 'fastify';
import {
  cursorAfter,
  encodeOncePerDomain,
  eventOf,
  isReset,
  isSkipped,
  kindOf,
  type DomainEvent,
  type StreamDomain,
  type StreamItemOf,
  type StreamResetOf,
  type StreamSkipped,
} from '@app/contracts';
import type { PollResult } from './poll';
import { endHijacked, endHijackedJson } from '../../http/hijacked-reply';

/** One element of a long-poll answer's `events`: the event with `type`, its kind's wire name. */
export type NamedEvent<E extends DomainEvent = DomainEvent> = { readonly type: string } & E;

/**
 * A 200 answer: what came after `after`, and the cursor to send next time.
 *
 * Order: an answer holds at most one `reset` or `skipped`, and it comes before every
 * event in `events`; a client applies it first, then the events. A batch that would put
 * one after an event (or hold two) is cut just before it, and `next` points there: the
 * next poll resumes from that cursor and the bus serves the rest (or says again what is
 * missing). So the body keeps its original shape, and a client that reads `reset` and
 * then `events` stays right.
 */
export interface PollBody {
  readonly orderId: string;
  /**
   * The events in seq order: the same JSON as the SSE and socket.io payloads, plus
   * `type`, the kind's wire name in the domain.
   */
  readonly events: NamedEvent[];
  /** The requested cursor could not be served without a gap: replace the view first. */
  readonly reset?: StreamResetOf;
  /** Events `fromSeq..toSeq`, before `events`, were dropped on overflow and are not coming. */
  readonly skipped?: StreamSkipped;
  /** Send this as `after` on the next request. */
  readonly next: number;
  /** The order is finished: no further events will come. */
  readonly completed: boolean;
}

/**
 * What of a poll's items one answer carries (see PollBody for the ordering rule): the
 * first `taken` items, of which the events are the items that are not a reset or skipped.
 */
interface AnswerShape {
  readonly taken: number;
  readonly reset?: StreamResetOf;
  readonly skipped?: StreamSkipped;
  readonly next: number;
  readonly completed: boolean;
}

function answerShape(after: number, result: PollResult): AnswerShape {
  const { items } = result;
  let reset: StreamResetOf | undefined;
  let skipped: StreamSkipped | undefined;
  let next = after;
  let taken = 0;
  for (const item of items) {
    // Only the first item of an answer may be a reset or a skipped range.
    if ((isReset(item) || isSkipped(item)) && taken > 0) break;
    if (isReset(item)) reset = item.reset;
    else if (isSkipped(item)) skipped = item.skipped;
    next = cursorAfter(item);
    taken++;
  }
  // A cut batch has not reached the end: the next poll finds the order finished.
  const completed = result.completed && taken === items.length;
  return { taken, reset, skipped, next, completed };
}

/** The body for a poll's items, as an object (pollBodyJson writes the same as text). */
export function pollBody(
  domain: StreamDomain,
  orderId: string,
  after: number,
  result: PollResult,
): PollBody {
  const { taken, reset, skipped, next, completed } = answerShape(after, result);
  const events: NamedEvent[] = [];
  for (const item of result.items.slice(0, taken)) {
    const named = namedEvent(domain, item);
    if (named !== undefined) events.push(named);
  }
  return {
    orderId,
    events,
    ...(reset ? { reset } : {}),
    ...(skipped ? { skipped } : {}),
    next,
    completed,
  };
}

/**
 * The JSON of one `events` element (`{"type":"status",...}`), made once for every poll
 * that carries the event (one cache per domain).
 */
export const pollEventJson = encodeOncePerDomain<string, StreamItemOf, StreamDomain>((domain) => ({
  encode: (item) => JSON.stringify(namedEvent(domain, item)),
  sizeOf: (text) => text.length,
}));

function namedEvent(domain: StreamDomain, item: StreamItemOf): NamedEvent | undefined {
  const event = eventOf(item);
  if (event === undefined) return undefined;
  return { type: kindOf(domain, event).wireName, ...event };
}

/**
 * `JSON.stringify(pollBody(orderId, after, result))`, key for key (PollBody's order:
 * orderId, events, reset, skipped, next, completed), with each event's JSON from
 * POLL_EVENT_JSON and only the per-poll parts serialized per request. Built from the
 * items directly: the object form would copy every event for nothing.
 */
export function pollBodyJson(
  domain: StreamDomain,
  orderId: string,
  after: number,
  result: PollResult,
): string {
  const { taken, reset, skipped, next, completed } = answerShape(after, result);
  const json = pollEventJson(domain);
  const events: string[] = [];
  for (let i = 0; i < taken; i++) {
    const item = result.items[i];
    if (!isReset(item) && !isSkipped(item)) events.push(json.get(item));
  }
  return (
    `{"orderId":${JSON.stringify(orderId)},"events":[${events.join(',')}]` +
    (reset !== undefined ? `,"reset":${JSON.stringify(reset)}` : '') +
    (skipped !== undefined ? `,"skipped":${JSON.stringify(skipped)}` : '') +
    `,"next":${next},"completed":${completed}}`
  );
}

/**
 * 200 with the batch and the next cursor, or 204 when nothing came within the wait,
 * written on the hijacked reply.
 */
export function answer(
  domain: StreamDomain,
  reply: FastifyReply,
  orderId: string,
  after: number,
  result: PollResult,
): void {
  const { items, completed, retryAfterMs } = result;
  if (items.length === 0 && !completed) {
    // Answered early at shutdown: poll again after the advised (jittered) delay.
    const retryAfter =
      retryAfterMs !== undefined ? { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) } : {};
    endHijacked(reply, 204, undefined, { 'cache-control': 'no-store', ...retryAfter });
    return;
  }
  endHijackedJson(reply, 200, pollBodyJson(domain, orderId, after, result), {
    'cache-control': 'no-store',
  });
}
