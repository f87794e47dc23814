import { WatchError, httpError, networkError } from '../watch-error';
import { ErrorCode } from '@app/contracts/gateway-error';
import {
  bearer,
  domainQuery,
  orderUrl,
  type ConnectionEnd,
  type ConnectRequest,
} from './connector';
import { SseParser } from './sse-parser';
import { wireItem, type WireDomain } from './wire-items';

/**
 * SSE over fetch (Node, or a browser told not to use EventSource): the token goes in
 * Authorization and the resume point in Last-Event-ID, as EventSource itself sends it
 * on a reconnect. Unlike EventSource it sees the status code (so a 401 is a 401) and
 * the `retry:` field, which becomes the reconnect advice after the stream ends, as the
 * reconnection time EventSource would use.
 */
export async function connectSseFetch(
  baseUrl: string,
  req: ConnectRequest,
  domain: WireDomain,
): Promise<ConnectionEnd> {
  const url = `${orderUrl(baseUrl, req.orderId, 'stream')}?${domainQuery(domain).slice(1)}`;
  const res = await fetch(url, {
    headers: {
      accept: 'text/event-stream',
      ...bearer(req.token()),
      ...(req.afterSeq > 0 ? { 'last-event-id': String(req.afterSeq) } : {}),
    },
    signal: req.signal,
  }).catch((err: unknown) => {
    throw networkError(url, err);
  });
  // 204: the order finished before this resume (WHATWG: "stop reconnecting").
  if (res.status === 204) return { reason: 'completed' };
  if (res.status !== 200 || res.body === null) {
    const body: unknown = await res.json().catch(() => undefined);
    throw httpError(res.status, body, res.headers.get('retry-after'));
  }
  req.opened();
  let end: ConnectionEnd | undefined;
  const parser = new SseParser((m) => {
    if (m.event === 'end') {
      const data = JSON.parse(m.data) as { reason: string; retryAfterMs?: number };
      const reason = data.reason;
      const retryAfterMs = data.retryAfterMs ?? parser.retryMs;
      end = retryAfterMs === undefined ? { reason } : { reason, retryAfterMs };
      return;
    }
    const item = wireItem(domain, m.event, JSON.parse(m.data));
    if (item) req.item(item);
  });
  const decoder = new TextDecoder();
  const reader = res.body.getReader();
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      parser.push(decoder.decode(chunk.value as Uint8Array, { stream: true }));
      if (end) break;
    }
  } finally {
    // Releases the connection whether the stream ended, failed or was aborted.
    await reader.cancel().catch(() => undefined);
  }
  if (end) return end;
  throw new WatchError(ErrorCode.Unavailable, 'stream closed without an end', parser.retryMs);
}
