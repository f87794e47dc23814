import { createParser, type EventSourceParser } from 'eventsource-parser';

/**
 * One thing an SSE stream carried, in order: a dispatched event, or a `retry:` field or a
 * comment (the `: ping` heartbeat) as a record of its own, so a test can see where in
 * the stream the server sent it.
 */
export interface SseMessage {
  /** The event type ('message' if the frame names none); '' for a retry or a comment. */
  readonly event: string;
  readonly data: string;
  /** The frame's own `id:` (tests check each frame's id, not the one EventSource carries on). */
  readonly id?: string;
  readonly retry?: number;
  readonly comment?: string;
}

/**
 * Incremental SSE parser for tests that read raw streams over node:http2 or TCP, on
 * `eventsource-parser` (WHATWG HTML "Server-sent events": any chunking, CRLF/LF/CR, an
 * event without data is not dispatched): feed it decoded text, get what it completed.
 */
export class SseParser {
  private out: SseMessage[] = [];
  private readonly parser: EventSourceParser = createParser({
    onEvent: ({ event, data, id }) =>
      this.out.push({ ...(id !== undefined ? { id } : {}), event: event ?? 'message', data }),
    onRetry: (retry) => this.out.push({ event: '', data: '', retry }),
    onComment: (comment) => this.out.push({ event: '', data: '', comment }),
  });

  push(chunk: string): SseMessage[] {
    this.parser.feed(chunk);
    const done = this.out;
    this.out = [];
    return done;
  }
}
