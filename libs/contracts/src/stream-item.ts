import type { ResetReason, StreamSkipped } from './stream-envelope';
import { kindOf, type DomainEvent, type DomainSnapshot, type StreamDomain } from './stream-domain';

/**
 * What a subscriber receives, whatever the domain: the domain's events, each under its
 * kind (`EventKind.itemKind`), and the envelope's own items, `reset` and `skipped`, which
 * say what was not delivered. The engine is written against these; a domain's own item
 * union (the order domain's `StreamItem`) is assignable to them. The `Of` keeps the names
 * apart from a domain's own: the client package's bundled types hold both.
 */

/**
 * Sent instead of events when a resume point cannot be served without a gap: the client
 * replaces its view with `snapshot` and continues from `snapshot.lastSeq`.
 */
export interface StreamResetOf<S extends DomainSnapshot = DomainSnapshot> {
  readonly reason: ResetReason;
  readonly snapshot: S;
}

export interface ResetItem<S extends DomainSnapshot = DomainSnapshot> {
  readonly kind: 'reset';
  readonly reset: StreamResetOf<S>;
}

export interface SkippedItem {
  readonly kind: 'skipped';
  readonly skipped: StreamSkipped;
}

/** An event's item: `{ kind: itemKind, [itemKind]: event }` (see `domainItem`). */
export interface EventItem<E extends DomainEvent = DomainEvent> {
  readonly kind: string;
  readonly [itemKind: string]: E | string;
}

/** The stream item that delivers `event`, under its kind's `itemKind`. */
export function domainItem<E extends DomainEvent>(
  domain: Pick<StreamDomain<E>, 'kinds'>,
  event: E,
): EventItem<E> {
  const kind = kindOf(domain, event).itemKind;
  return { kind, [kind]: event };
}

/**
 * A stream's items. An event item's `kind` is any string, so `item.kind === 'reset'` does
 * not narrow this union: `isReset` and `isSkipped` do.
 */
export type StreamItemOf<
  E extends DomainEvent = DomainEvent,
  S extends DomainSnapshot = DomainSnapshot,
> = ResetItem<S> | SkippedItem | EventItem<E>;

export function isReset<S extends DomainSnapshot>(
  item: StreamItemOf<DomainEvent, S> | undefined,
): item is ResetItem<S> {
  return item?.kind === 'reset';
}

export function isSkipped(item: StreamItemOf | undefined): item is SkippedItem {
  return item?.kind === 'skipped';
}

/** The event an item delivers; undefined for a reset or a skipped range. */
export function eventOf<E extends DomainEvent>(
  item: StreamItemOf<E, DomainSnapshot>,
): E | undefined {
  if (item.kind === 'reset' || item.kind === 'skipped') return undefined;
  return (item as EventItem<E>)[item.kind] as E;
}

/**
 * The client's cursor after it has received `item`: the seq to resume after. Every
 * transport's resume point (SSE `id:`, long-poll `next`, gRPC `resume-after-seq`) is this.
 */
export function cursorAfter(item: StreamItemOf): number {
  if (isReset(item)) return item.reset.snapshot.lastSeq;
  if (isSkipped(item)) return item.skipped.toSeq;
  return (item[item.kind] as DomainEvent).seq;
}

/** An item's body on the JSON transports: the field named like its kind (`{kind, [kind]}`). */
export function payloadOf(item: StreamItemOf): object {
  return (item as unknown as Readonly<Record<string, object>>)[item.kind];
}
