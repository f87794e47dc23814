import { createParser, type EventSourceParser } from 'eventsource-parser';

/** One dispatched SSE message (WHATWG HTML, "Interpreting an event stream"). */
export interface SseMessage {
  readonly event: string;
  readonly data: string;
  /** The last event ID after this message (persists across messages, as in EventSource). */
  readonly id: string | undefined;
}

/**
 * text/event-stream as an EventSource reads it, parsed by `eventsource-parser` (any
 * chunking, CRLF/LF/CR line ends, comments, `retry:`; an event without data is not
 * dispatched). This adds what EventSource keeps across messages: the last event ID,
 * the `message` default type, the reconnection delay and a heartbeat count. It takes
 * decoded text: the HTTP getters decode with `setEncoding('utf8')`, which holds back a
 * UTF-8 sequence split between chunks.
 */
export class SseParser {
  /** Reconnection delay the server asked for with `retry:`. */
  retryMs: number | undefined;
  /** Comment lines seen (`: ping` heartbeats). */
  comments = 0;
  private lastEventId: string | undefined;
  private readonly parser: EventSourceParser;

  constructor(onMessage: (message: SseMessage) => void) {
    this.parser = createParser({
      // Called for every block with an `id:`, dispatched or not, before its event.
      onId: (id) => {
        this.lastEventId = id;
      },
      onEvent: (e) =>
        onMessage({ event: e.event ?? 'message', data: e.data, id: this.lastEventId }),
      onRetry: (ms) => {
        this.retryMs = ms;
      },
      onComment: () => {
        this.comments += 1;
      },
    });
  }

  feed(text: string): void {
    this.parser.feed(text);
  }
}
