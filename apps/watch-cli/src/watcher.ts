import {
  watchOrder,
  type ConnectionEvent,
  type EndItem,
  type GapItem,
  type WatchError,
} from '@app/client/node';
import { kindOfItem, type DomainEvent, type StreamDomain } from '@app/contracts/stream-domain';
import { nowUs, StreamEndReason } from '@app/contracts/stream-envelope';
import { eventOf, isReset, isSkipped, type StreamItemOf } from '@app/contracts/stream-item';
import { readToken, type WatchOptions } from './options';

export interface WatchOutput {
  line(text: string): void;
  error(text: string): void;
}

/** What a watch hands out, whatever the domain: its stream's items, then gaps and the end. */
export type CliItem = StreamItemOf | GapItem | EndItem;

const END_REASONS = new Set<string>(Object.values(StreamEndReason));

function time(): string {
  return new Date().toISOString().slice(11, 23);
}

function latency(e: DomainEvent): string {
  const ms = Math.max(0, nowUs() - e.publishedAtUs) / 1000;
  return `${ms.toFixed(1).padStart(8)} ms`;
}

/**
 * One line per item, undefined for the items that print nothing. An event's line is the
 * same for every domain (seq, its kind's wire name, latency) and ends with what the
 * domain's `summary` says of it.
 */
export function itemLine(domain: StreamDomain, item: CliItem): string | undefined {
  switch (item.kind) {
    case 'gap': {
      const gap = item as GapItem;
      return `${time()}  LOST #${gap.fromSeq}..#${gap.toSeq}: not delivered and not accounted for by the service`;
    }
    case 'end': {
      // Only a domain's terminal event completes a stream (a payload stream never does).
      const end = item as EndItem;
      return end.reason === 'completed'
        ? `${time()}  ${domain.name} finished (seq ${end.lastSeq})`
        : undefined;
    }
  }
  const streamItem = item as StreamItemOf;
  if (isReset(streamItem)) {
    const { reason, snapshot } = streamItem.reset;
    const now = domain.snapshotSummary?.(snapshot);
    return `${time()}  reset (${reason}): now at seq ${snapshot.lastSeq}${now ? `, ${now}` : ''}`;
  }
  if (isSkipped(streamItem)) {
    const { fromSeq, toSeq, reason } = streamItem.skipped;
    // The service kept up and this watcher did not: it says so instead of leaving a gap.
    return `${time()}  skipped #${fromSeq}..#${toSeq} (${reason}): read too slowly, continuing`;
  }
  const e = eventOf(streamItem) as DomainEvent;
  const kind = kindOfItem(domain, streamItem.kind)?.wireName ?? streamItem.kind;
  const summary = domain.summary?.(e);
  return `${time()}  #${String(e.seq).padEnd(5)} ${kind.padEnd(17)} ${latency(e)}${summary ? `  ${summary}` : ''}`;
}

/** One line per connection event worth telling a person about. */
function connectionLine(o: WatchOptions, e: ConnectionEvent): string | undefined {
  switch (e.type) {
    case 'open':
      return e.reconnect
        ? `${time()}  resumed after seq ${e.afterSeq}`
        : `${time()}  connected to ${o.domain} ${o.streamId} over ${o.transport}${e.afterSeq > 0 ? `, after seq ${e.afterSeq}` : ''}`;
    case 'retrying':
      if (e.error !== undefined) {
        return `${time()}  ${failureText(e.error)}; retrying in ${Math.round(e.delayMs)} ms`;
      }
      return END_REASONS.has(e.reason)
        ? `${time()}  stream ended (${e.reason}); reconnecting in ${Math.round(e.delayMs)} ms`
        : `${time()}  connection lost (${e.reason}); reconnecting in ${Math.round(e.delayMs)} ms`;
    case 'token':
      return e.reason === 'renewed'
        ? `${time()}  stream moved to the new token`
        : `${time()}  asking for a new token (${e.reason})`;
    default:
      return undefined;
  }
}

/**
 * A failed attempt as the client library reports it: its message names the URL and the
 * network cause (refused, DNS, TLS, a refused Origin) when the service never answered.
 */
function failureText(err: WatchError): string {
  return err.network !== undefined ? `cannot connect to ${err.message}` : err.message;
}

/** How a watch ended: the library's end, and whether it gave up never having connected. */
export interface WatchResult {
  readonly end: EndItem;
  /** No connection opened within `connectTimeoutMs`: the watch was given up. */
  readonly neverConnected: boolean;
}

/**
 * Follows one stream of `domain` (the descriptor of `o.domain`) through the client library
 * (libs/client): prints each item, and
 * resolves with the watch's end (completed, aborted by `signal`, or a permanent error:
 * the library has already asked for a new token once where one could help). Every failed
 * attempt is printed with the library's error. A watch that has not connected within
 * `connectTimeoutMs` is given up here rather than by the library's `giveUpAfterMs`: a
 * connect that never answers (a host that drops packets) is bounded too, and a watch
 * that did connect keeps resuming for as long as the service is away.
 */
export async function watch(
  o: WatchOptions,
  domain: StreamDomain,
  out: WatchOutput,
  signal: AbortSignal,
): Promise<WatchResult> {
  const tokenFile = o.tokenFile;
  const giveUp = new AbortController();
  const timer = setTimeout(() => giveUp.abort(), o.connectTimeoutMs);
  let lastFailure: WatchError | undefined;
  const w = watchOrder(o.streamId, {
    domain,
    transport: o.transport,
    baseUrl: o.url,
    after: o.after,
    signal: AbortSignal.any([signal, giveUp.signal]),
    // The bound before a first connection is --connect-timeout's (above), none after it.
    giveUpAfterMs: Number.POSITIVE_INFINITY,
    ...(o.token !== undefined ? { token: o.token } : {}),
    ...(tokenFile !== undefined ? { getToken: () => readToken(tokenFile) } : {}),
    onConnection: (e) => {
      if (e.type === 'open') clearTimeout(timer);
      if (e.type === 'retrying' && e.error !== undefined) lastFailure = e.error;
      if (giveUp.signal.aborted) return;
      const text = connectionLine(o, e);
      if (text !== undefined) out.line(text);
    },
  });
  try {
    for await (const item of w) {
      const text = itemLine(domain, item);
      if (text !== undefined) out.line(text);
    }
  } finally {
    clearTimeout(timer);
  }
  const end = await w.done;
  const neverConnected = giveUp.signal.aborted && !signal.aborted;
  if (neverConnected) {
    const seconds = o.connectTimeoutMs / 1000;
    // Given up before a first attempt failed: the connect itself got no answer.
    const why = lastFailure !== undefined ? failureText(lastFailure) : 'no answer';
    out.error(
      `${o.streamId}: no connection to ${o.url} in ${seconds} s (${why}): ` +
        'is the service running there? (--url, or HTTP_PORT / GRPC_PORT as the service has them)',
    );
  } else if (end.kind === 'end' && end.reason === 'error') {
    const mismatch = end.error.domainMismatch;
    out.error(
      mismatch !== undefined
        ? `${o.streamId}: the service streams the ${mismatch.served} domain, not ${mismatch.expected}: watch with --domain ${mismatch.served}`
        : `${o.streamId}: ${end.error.code}: ${end.error.message}`,
    );
  }
  return { end, neverConnected };
}
