import type { StreamEndReason, StreamItem } from '@app/contracts';

/**
 * SSE wire format (WHATWG HTML, "Server-sent events"). Every event carries `id:` = its
 * seq, so a browser's automatic reconnect sends Last-Event-ID = the last seq it saw and
 * resumes exactly there. A reset carries the snapshot's last seq as its id for the same
 * reason.
 */
export function itemFrame(item: StreamItem): string {
  if (item.kind === 'event') {
    return `id: ${item.event.seq}\nevent: status\ndata: ${JSON.stringify(item.event)}\n\n`;
  }
  return `id: ${item.reset.snapshot.lastSeq}\nevent: reset\ndata: ${JSON.stringify(item.reset)}\n\n`;
}

/** Tells the client why the stream ends; `completed` means "do not reconnect". */
export function endFrame(reason: StreamEndReason): string {
  return `event: end\ndata: ${JSON.stringify({ reason })}\n\n`;
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
