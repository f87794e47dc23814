/** One dispatched SSE message. */
export interface SseMessage {
  readonly event: string;
  readonly data: string;
  readonly id?: string;
}

/**
 * Incremental parser for `text/event-stream` (WHATWG HTML, "Server-sent events",
 * 9.2.6 "Interpreting an event stream"): lines end in CRLF, LF or CR; `data:` lines
 * join with LF; a blank line dispatches; comments (`: ping`) are ignored; `retry:` with
 * digits only sets the reconnection time. Chunks may split lines anywhere.
 */
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private id: string | undefined;
  private sawCr = false;
  /** The last `retry:` value, in ms. */
  retryMs: number | undefined;

  constructor(private readonly dispatch: (m: SseMessage) => void) {}

  push(chunk: string): void {
    let text = chunk;
    // A CR at the end of the last chunk and a LF at the start of this one are one CRLF.
    if (this.sawCr && text.startsWith('\n')) text = text.slice(1);
    this.sawCr = text.endsWith('\r');
    this.buffer += text;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (m === null) return;
      // A lone CR at the very end may be the first half of a CRLF: wait for more.
      if (m[0] === '\r' && m.index === this.buffer.length - 1) {
        this.line(this.buffer.slice(0, m.index));
        this.buffer = '';
        return;
      }
      this.line(this.buffer.slice(0, m.index));
      this.buffer = this.buffer.slice(m.index + m[0].length);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) {
        const msg: SseMessage = {
          event: this.event || 'message',
          data: this.data.join('\n'),
          ...(this.id !== undefined ? { id: this.id } : {}),
        };
        this.dispatch(msg);
      }
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
  }
}
