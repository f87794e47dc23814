import { watchOrder, type ConnectionEvent, type EndItem, type WatchItem } from '@app/client/node';
import { nowUs, StreamEndReason, type OrderEvent } from '@app/contracts/order-events';
import { readToken, type WatchOptions } from './options';
import { tcpFailure } from './reachability';

export interface WatchOutput {
  line(text: string): void;
  error(text: string): void;
}

const END_REASONS = new Set<string>(Object.values(StreamEndReason));

function time(): string {
  return new Date().toISOString().slice(11, 23);
}

function latency(e: OrderEvent): string {
  const ms = Math.max(0, nowUs() - e.publishedAtUs) / 1000;
  return `${ms.toFixed(1).padStart(8)} ms`;
}

/** One line per item; undefined for the items that print nothing. */
export function itemLine(item: WatchItem): string | undefined {
  switch (item.kind) {
    case 'event': {
      const e = item.event;
      const why = e.reason ? `  (${e.reason})` : '';
      return `${time()}  #${String(e.seq).padEnd(5)} ${e.status.padEnd(17)} ${latency(e)}${why}`;
    }
    case 'tracking': {
      const t = item.tracking;
      const where = `${t.location.lat.toFixed(4)},${t.location.lon.toFixed(4)}`;
      const eta = new Date(t.etaMs).toISOString().slice(11, 16);
      return `${time()}  #${String(t.seq).padEnd(5)} ${'tracking'.padEnd(17)} ${latency(t)}  at ${where}, eta ${eta}Z`;
    }
    case 'reset':
      return `${time()}  reset (${item.reset.reason}): now ${item.reset.snapshot.status} at seq ${item.reset.snapshot.lastSeq}`;
    case 'skipped':
      // The service kept up and this watcher did not: it says so instead of leaving a gap.
      return `${time()}  skipped #${item.skipped.fromSeq}..#${item.skipped.toSeq} (${item.skipped.reason}): read too slowly, continuing`;
    case 'gap':
      return `${time()}  LOST #${item.fromSeq}..#${item.toSeq}: not delivered and not accounted for by the service`;
    case 'end':
      return item.reason === 'completed'
        ? `${time()}  order finished (seq ${item.lastSeq})`
        : undefined;
  }
}

/** One line per connection event worth telling a person about. */
function connectionLine(o: WatchOptions, e: ConnectionEvent): string | undefined {
  switch (e.type) {
    case 'open':
      return e.reconnect
        ? `${time()}  resumed after seq ${e.afterSeq}`
        : `${time()}  connected to ${o.orderId} over ${o.transport}${e.afterSeq > 0 ? `, after seq ${e.afterSeq}` : ''}`;
    case 'retrying':
      // A failed connection is told once its cause is known (see watch()).
      return END_REASONS.has(e.reason)
        ? `${time()}  stream ended (${e.reason}); reconnecting in ${Math.round(e.delayMs)} ms`
        : undefined;
    case 'token':
      return e.reason === 'renewed'
        ? `${time()}  stream moved to the new token`
        : `${time()}  asking for a new token (${e.reason})`;
    default:
      return undefined;
  }
}

/** How a watch ended: the library's end, and whether it gave up never having connected. */
export interface WatchResult {
  readonly end: EndItem;
  /** No connection opened within `connectTimeoutMs`: the watch was given up. */
  readonly neverConnected: boolean;
}

/**
 * Follows one order through the client library (libs/client): prints each item, and
 * resolves with the watch's end (completed, aborted by `signal`, or a permanent error:
 * the library has already asked for a new token once where one could help). A watch
 * that has not connected within `connectTimeoutMs` is given up; every failed connection
 * is printed with the URL and the cause (the TCP error when the address does not accept).
 */
export async function watch(
  o: WatchOptions,
  out: WatchOutput,
  signal: AbortSignal,
): Promise<WatchResult> {
  const tokenFile = o.tokenFile;
  const giveUp = new AbortController();
  const timer = setTimeout(() => giveUp.abort(), o.connectTimeoutMs);
  let lastFailure: string | undefined;
  let diagnosing: Promise<void> = Promise.resolve();
  const failed = (reason: string, delayMs: number) => {
    diagnosing = tcpFailure(o.url).then((cause) => {
      lastFailure = cause === undefined || reason.includes(cause) ? reason : `${reason}: ${cause}`;
      if (!giveUp.signal.aborted && !signal.aborted) {
        out.line(
          `${time()}  cannot connect to ${o.url} (${lastFailure}); retrying in ${Math.round(delayMs)} ms`,
        );
      }
    });
  };
  const w = watchOrder(o.orderId, {
    transport: o.transport,
    baseUrl: o.url,
    after: o.after,
    signal: AbortSignal.any([signal, giveUp.signal]),
    ...(o.token !== undefined ? { token: o.token } : {}),
    ...(tokenFile !== undefined ? { getToken: () => readToken(tokenFile) } : {}),
    onConnection: (e) => {
      if (e.type === 'open') clearTimeout(timer);
      if (e.type === 'retrying' && !END_REASONS.has(e.reason)) failed(e.reason, e.delayMs);
      const text = connectionLine(o, e);
      if (text !== undefined) out.line(text);
    },
  });
  try {
    for await (const item of w) {
      const text = itemLine(item);
      if (text !== undefined) out.line(text);
    }
  } finally {
    clearTimeout(timer);
  }
  const end = await w.done;
  const neverConnected = giveUp.signal.aborted && !signal.aborted;
  if (neverConnected) {
    await diagnosing;
    // Given up before the first attempt failed (a slow host): ask the address directly.
    lastFailure ??= await tcpFailure(o.url);
    const seconds = o.connectTimeoutMs / 1000;
    out.error(
      `${o.orderId}: no connection to ${o.url} in ${seconds} s (${lastFailure ?? 'no answer'}): ` +
        'is the service running there? (--url, or HTTP_PORT / GRPC_PORT as the service has them)',
    );
  } else if (end.kind === 'end' && end.reason === 'error') {
    out.error(`${o.orderId}: ${end.error.code}: ${end.error.message}`);
  }
  return { end, neverConnected };
}
