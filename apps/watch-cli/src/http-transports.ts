import type { OrderStatusChanged, StreamReset, StreamSkipped } from '@app/contracts';
import type { Connect, ConnectionEnd } from './connection';
import { LONG_POLL_WAIT_S, type WatchOptions } from './options';

function authHeaders(token: string | undefined): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}

function ordersUrl(o: WatchOptions, suffix: string): string {
  return `${o.url.replace(/\/+$/, '')}/v1/orders/${encodeURIComponent(o.orderId)}/${suffix}`;
}

/**
 * SSE over fetch: Node can send headers, so the token goes in Authorization (no ticket)
 * and the resume point in Last-Event-ID, exactly what a browser's EventSource sends when
 * it reconnects.
 */
export function sseConnect(o: WatchOptions): Connect {
  return async (afterSeq, h, signal) => {
    const res = await fetch(ordersUrl(o, 'stream'), {
      headers: {
        accept: 'text/event-stream',
        ...authHeaders(o.token),
        ...(afterSeq > 0 ? { 'last-event-id': String(afterSeq) } : {}),
      },
      signal,
    });
    // 204: resuming an order that has finished since.
    if (res.status === 204) return { reason: 'completed' };
    if (res.status !== 200 || !res.body) throw new Error(`HTTP ${res.status}`);
    h.opened();
    let end: ConnectionEnd | undefined;
    let retryMs: number | undefined;
    let buffer = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        let event = 'message';
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data += line.slice(5).trim();
          else if (line.startsWith('retry:')) retryMs = Number(line.slice(6).trim());
        }
        if (event === 'status') h.event(JSON.parse(data) as OrderStatusChanged);
        else if (event === 'reset') h.reset(JSON.parse(data) as StreamReset);
        else if (event === 'skipped') h.skipped(JSON.parse(data) as StreamSkipped);
        else if (event === 'end') {
          const { reason } = JSON.parse(data) as { reason: string };
          // The `retry:` sent just before `end` is the server's reconnect advice.
          end = {
            reason,
            ...(retryMs !== undefined && reason === 'shutdown' ? { retryAfterMs: retryMs } : {}),
          };
        }
      }
    }
    if (end) return end;
    throw new Error('stream closed without an end');
  };
}

/** Long-poll: one held request after another, each with the cursor of the last answer. */
export function longPollConnect(o: WatchOptions): Connect {
  return async (afterSeq, h, signal) => {
    let after = afterSeq;
    let opened = false;
    for (;;) {
      const res = await fetch(`${ordersUrl(o, 'events')}?after=${after}&wait=${LONG_POLL_WAIT_S}`, {
        headers: authHeaders(o.token),
        signal,
      });
      if (res.status !== 200 && res.status !== 204) throw new Error(`HTTP ${res.status}`);
      if (!opened) {
        opened = true;
        h.opened();
      }
      if (res.status === 204) {
        const retryAfter = res.headers.get('retry-after');
        // Answered early by a stopping server: come back after its advice.
        if (retryAfter !== null)
          return { reason: 'shutdown', retryAfterMs: Number(retryAfter) * 1000 };
        continue;
      }
      const body = (await res.json()) as {
        events: OrderStatusChanged[];
        reset?: StreamReset;
        skipped?: StreamSkipped;
        next: number;
        completed: boolean;
      };
      // A reset or skipped range, when present, comes before the events.
      if (body.reset) h.reset(body.reset);
      if (body.skipped) h.skipped(body.skipped);
      for (const e of body.events) h.event(e);
      after = body.next;
      if (body.completed) return { reason: 'completed' };
    }
  };
}
