/** One parsed Server-Sent Event (comments are reported as `comment`). */
export interface SseMessage {
  readonly id?: string;
  readonly event: string;
  readonly data: string;
  readonly retry?: number;
  readonly comment?: string;
}

/**
 * Incremental SSE parser (WHATWG HTML "Server-sent events" interpretation rules, enough
 * for tests that read raw streams over node:http2 or TCP): feed it chunks, get messages.
 */
export class SseParser {
  private buffer = '';

  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const out: SseMessage[] = [];
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end < 0) return out;
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let id: string | undefined;
      let event = 'message';
      const data: string[] = [];
      let retry: number | undefined;
      let comment: string | undefined;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          comment = line.slice(1).trim();
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') id = value;
        else if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'retry') retry = Number(value);
      }
      out.push({
        ...(id !== undefined ? { id } : {}),
        event,
        data: data.join('\n'),
        ...(retry !== undefined ? { retry } : {}),
        ...(comment !== undefined ? { comment } : {}),
      });
    }
  }
}
