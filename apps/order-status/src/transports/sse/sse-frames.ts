import {
  cursorAfter,
  encodeOncePerDomain,
  itemWireName,
  payloadOf,
  type StreamDomain,
  type StreamEndReason,
  type StreamItemOf,
} from '@app/contracts';

/**
 * SSE wire format (WHATWG HTML, "Server-sent events"). Every frame carries `id:` = the
 * client's cursor after it (`cursorAfter`), so a browser's automatic reconnect sends
 * Last-Event-ID = the last seq it has accounted for and resumes exactly there: an event's
 * seq, a reset's snapshot last seq, a skipped range's `toSeq`. An event's `event:` field
 * is its kind's wire name in `domain`.
 */
export function itemFrame(domain: StreamDomain, item: StreamItemOf): string {
  const id = cursorAfter(item);
  return `id: ${id}\nevent: ${itemWireName(domain, item)}\ndata: ${JSON.stringify(payloadOf(item))}\n\n`;
}

/**
 * Each event's frame as UTF-8 bytes, made once for every stream that carries the event
 * (one cache per domain): `res.write()` of a string encodes it per stream, a Buffer is
 * written as it is.
 */
export const sseFrames = encodeOncePerDomain<Buffer, StreamItemOf, StreamDomain>((domain) => ({
  encode: (item) => Buffer.from(itemFrame(domain, item), 'utf8'),
  sizeOf: (frame) => frame.length,
}));

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
