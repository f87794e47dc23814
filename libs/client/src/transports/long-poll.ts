import { StreamEndReason, type StreamSkipped } from '@app/contracts/stream-envelope';
import type { StreamItemOf, StreamResetOf } from '@app/contracts/stream-item';
import { httpError, networkError, retryAfterHeaderMs } from '../watch-error';
import {
  bearer,
  domainQuery,
  orderUrl,
  type ConnectionEnd,
  type ConnectorFactory,
} from './connector';
import { defaultWireName, wireItem, type WireDomain } from './wire-items';

/** A 200 answer of `GET /v1/orders/:id/events`. */
interface PollBody {
  /** The domain's events, each named by `type`, its kind's wire name. */
  readonly events: { readonly type?: string }[];
  readonly reset?: StreamResetOf;
  readonly skipped?: StreamSkipped;
  readonly next: number;
  readonly completed: boolean;
}

/**
 * The answer's items in order: a reset or skipped range comes before the events. Each
 * event's `type` is its wire name, as SSE's `event:` (an untagged one is of the domain's last
 * kind, as services from before kinds had names sent).
 */
function itemsOf(domain: WireDomain, body: PollBody): StreamItemOf[] {
  const items: StreamItemOf[] = [];
  if (body.reset) items.push({ kind: 'reset', reset: body.reset });
  if (body.skipped) items.push({ kind: 'skipped', skipped: body.skipped });
  for (const { type, ...event } of body.events) {
    const item = wireItem(domain, type ?? defaultWireName(domain), event);
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
export const longPollConnector: ConnectorFactory<WireDomain> = (opts) => {
  const { domain } = opts;
  return {
    tokenPerRequest: true,
    connect: async (req): Promise<ConnectionEnd> => {
      let opened = false;
      for (;;) {
        const url = `${orderUrl(opts.baseUrl, req.orderId, 'events')}?after=${req.cursor()}&wait=${opts.longPollWaitS}${domainQuery(domain)}`;
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
        for (const item of itemsOf(domain, body)) req.item(item);
        if (body.completed) return { reason: StreamEndReason.Completed };
      }
    },
    close: () => undefined,
  };
};
