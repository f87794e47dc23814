import type { StreamItem, StreamReset, StreamSkipped } from '@app/contracts/order-events';
import { StreamEndReason } from '@app/contracts/order-events';
import { httpError, networkError, retryAfterHeaderMs } from '../watch-error';
import { bearer, orderUrl, type ConnectionEnd, type ConnectorFactory } from './connector';
import { wireItem } from './wire-items';

/** A 200 answer of `GET /v1/orders/:id/events`. */
interface PollBody {
  /** Status changes and tracking updates, each named by `type` (`status`, `tracking`). */
  readonly events: { readonly type?: string }[];
  readonly reset?: StreamReset;
  readonly skipped?: StreamSkipped;
  readonly next: number;
  readonly completed: boolean;
}

/**
 * The answer's items in order: a reset or skipped range comes before the events. Each
 * event's `type` is its wire name, as SSE's `event:` (an untagged one is a status change).
 */
function itemsOf(body: PollBody): StreamItem[] {
  const items: StreamItem[] = [];
  if (body.reset) items.push({ kind: 'reset', reset: body.reset });
  if (body.skipped) items.push({ kind: 'skipped', skipped: body.skipped });
  for (const { type, ...event } of body.events) {
    const item = wireItem(type ?? 'status', event);
    if (item) items.push(item);
  }
  return items;
}

/**
 * Long-poll: one held request after another, each with `after` = the cursor, so a poll
 * lost in flight costs nothing. The token is read for every poll, so a refreshed one is
 * used from the next poll on (the service never holds a poll past the token's expiry).
 * A 204 with `Retry-After` is the service draining: the stream ends with its advice.
 */
export const longPollConnector: ConnectorFactory = (opts) => ({
  tokenPerRequest: true,
  connect: async (req): Promise<ConnectionEnd> => {
    let opened = false;
    for (;;) {
      const url = `${orderUrl(opts.baseUrl, req.orderId, 'events')}?after=${req.cursor()}&wait=${opts.longPollWaitS}`;
      const res = await fetch(url, {
        headers: bearer(req.token()),
        signal: req.signal,
      }).catch((err: unknown) => {
        throw networkError(url, err);
      });
      if (res.status !== 200 && res.status !== 204) {
        const body: unknown = await res.json().catch(() => undefined);
        throw httpError(res.status, body, res.headers.get('retry-after'));
      }
      if (!opened) {
        opened = true;
        req.opened();
      }
      if (res.status === 204) {
        const retryAfterMs = retryAfterHeaderMs(res.headers.get('retry-after'));
        if (retryAfterMs !== undefined) return { reason: StreamEndReason.Shutdown, retryAfterMs };
        continue;
      }
      const body = (await res.json()) as PollBody;
      for (const item of itemsOf(body)) req.item(item);
      if (body.completed) return { reason: StreamEndReason.Completed };
    }
  },
  close: () => undefined,
});
