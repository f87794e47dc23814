/** One dispatched SSE message (WHATWG HTML, "Interpreting an event stream"). */
export interface SseMessage {
  readonly event: string;
  readonly data: string;
  /** The last event ID after this message (persists across messages, as in EventSource). */
  readonly id: string | undefined;
}

/**
 * Incremental parser for text/event-stream. It takes decoded text in arbitrary chunks
 * (a line may be split anywhere, even between '\r' and '\n') and follows the spec's
 * rules: lines end in CRLF, LF or CR; ':' starts a comment; a blank line dispatches; an
 * event with no data is not dispatched; one leading space after ':' is stripped.
 */
export class SseParser {
  private buffer = '';
  private skipLeadingLf = false;
  private data: string[] = [];
  private eventType = '';
  private lastEventId: string | undefined;
  /** Reconnection delay the server asked for with `retry:`. */
  retryMs: number | undefined;
  /** Comment lines seen (`: ping` heartbeats). */
  comments = 0;

  constructor(private readonly onMessage: (message: SseMessage) => void) {}

  feed(text: string): void {
    const buf = this.buffer.length > 0 ? this.buffer + text : text;
    let start = 0;
    if (this.skipLeadingLf && buf.charCodeAt(0) === 10) start = 1;
    this.skipLeadingLf = false;
    // Line ends are found with indexOf (native) rather than a loop over every character:
    // the generator parses every frame of thousands of streams. `cr` is searched again
    // only once passed, so a stream without CR costs one failed search per chunk.
    let lf = buf.indexOf('\n', start);
    let cr = buf.indexOf('\r', start);
    for (;;) {
      if (lf >= 0 && lf < start) lf = buf.indexOf('\n', start);
      if (cr >= 0 && cr < start) cr = buf.indexOf('\r', start);
      let i = cr < 0 ? lf : lf < 0 ? cr : Math.min(lf, cr);
      if (i < 0) break;
      this.line(buf.slice(start, i));
      if (i === cr) {
        if (i + 1 === buf.length) this.skipLeadingLf = true;
        else if (buf.charCodeAt(i + 1) === 10) i += 1;
      }
      start = i + 1;
    }
    this.buffer = start === 0 ? buf : buf.slice(start);
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.charCodeAt(0) === 58 /* ':' */) {
      this.comments += 1;
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break; // unknown fields are ignored
    }
  }

  private dispatch(): void {
    const data = this.data;
    const event = this.eventType || 'message';
    this.data = [];
    this.eventType = '';
    if (data.length === 0) return;
    this.onMessage({ event, data: data.join('\n'), id: this.lastEventId });
  }
}
