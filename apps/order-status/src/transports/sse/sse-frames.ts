import { cursorAfter, EncodeOnce, type StreamEndReason, type StreamItem } from '@app/contracts';

/**
 * SSE wire format (WHATWG HTML, "Server-sent events"). Every frame carries `id:` = the
 * client's cursor after it (`cursorAfter`), so a browser's automatic reconnect sends
 * Last-Event-ID = the last seq it has accounted for and resumes exactly there: an event's
 * seq, a reset's snapshot last seq, a skipped range's `toSeq`.
 */
export function itemFrame(item: StreamItem): string {
  const id = cursorAfter(item);
  switch (item.kind) {
    case 'event':
      return `id: ${id}\nevent: status\ndata: ${JSON.stringify(item.event)}\n\n`;
    case 'tracking':
      return `id: ${id}\nevent: tracking\ndata: ${JSON.stringify(item.tracking)}\n\n`;
    case 'reset':
      return `id: ${id}\nevent: reset\ndata: ${JSON.stringify(item.reset)}\n\n`;
    case 'skipped':
      return `id: ${id}\nevent: skipped\ndata: ${JSON.stringify(item.skipped)}\n\n`;
  }
}

/**
 * Each event's frame as UTF-8 bytes, made once for every stream that carries the event:
 * `res.write()` of a string encodes it per stream, a Buffer is written as it is.
 */
export const SSE_FRAMES = new EncodeOnce<Buffer>({
  encode: (item) => Buffer.from(itemFrame(item), 'utf8'),
  sizeOf: (frame) => frame.length,
});

/**
 * Tells the client why the stream ends; `completed` means "do not reconnect". The
 * reconnect advice (shutdown) goes in a `retry:` field for EventSource and in the data as
 * well: a client that must close EventSource itself (a single-use ticket in the URL) can
 * read the data but never sees `retry:` (the same field socket.io's `end` carries).
 */
export function endFrame(reason: StreamEndReason, retryAfterMs?: number): string {
  const data = retryAfterMs === undefined ? { reason } : { reason, retryAfterMs };
  return `event: end\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The reconnection delay EventSource should use. */
export function retryFrame(retryMs: number): string {
  return `retry: ${retryMs}\n\n`;
}

/**
 * A comment line: ignored by EventSource, but it keeps proxies and load balancers from
 * closing an idle connection (nginx proxy_read_timeout defaults to 60 s).
 */
export const HEARTBEAT_FRAME = ': ping\n\n';
