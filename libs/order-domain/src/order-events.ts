import type { ResetReason, StreamSkipped } from '@app/contracts/stream-envelope';
import type { OrderStatus } from './order-status';

/**
 * A real change of an order's status. `seq` is per order (shared with the order's
 * tracking updates), starts at 1 and increases by exactly 1; `publishedAtUs` is epoch
 * microseconds taken at publish time.
 */
export interface OrderStatusChanged {
  readonly orderId: string;
  readonly seq: number;
  readonly status: OrderStatus;
  /** The status this change left; absent only on the first event (`created`). */
  readonly previousStatus?: OrderStatus;
  readonly publishedAtUs: number;
  /** Why the order was cancelled (only on `cancelled`, and only when the publisher said). */
  readonly reason?: string;
  /**
   * Never set: it keeps a TrackingUpdated from type-checking as an OrderStatusChanged
   * (it has every required field of one), so code that handles only status changes
   * cannot be handed a tracking update by mistake.
   */
  readonly location?: never;
}

/** A position in WGS 84 degrees, as GPS and map APIs give it. */
export interface GeoPoint {
  /** Latitude, -90..90. */
  readonly lat: number;
  /** Longitude, -180..180. */
  readonly lon: number;
}

/** Where a parcel is and when it should arrive. */
export interface Tracking {
  readonly location: GeoPoint;
  /** Estimated time of arrival, epoch milliseconds. */
  readonly etaMs: number;
}

/**
 * Progress of an order that does not change its status (a carrier scan, a GPS fix, a
 * new ETA): the high-rate event. It shares the order's `seq` sequence with status
 * changes, so order, resume and retention work the same for both, and `seq` and
 * `publishedAtUs` have the same names (and proto field numbers) in both kinds.
 * `status` is the order's status when it was published (a tracking update never changes
 * it): with it every event carries the order's whole state, so a client that was sent
 * only the newest event (overflow conflation) still knows the current status.
 */
export interface TrackingUpdated extends Tracking {
  readonly orderId: string;
  readonly seq: number;
  readonly status: OrderStatus;
  readonly publishedAtUs: number;
}

/** Every event an order's stream carries, in one seq sequence. */
export type OrderEvent = OrderStatusChanged | TrackingUpdated;

/** Tells the two event kinds apart (only a tracking update has a location). */
export function isTrackingUpdate(event: OrderEvent): event is TrackingUpdated {
  return (event as Partial<TrackingUpdated>).location !== undefined;
}

export interface OrderSnapshot {
  readonly orderId: string;
  readonly status: OrderStatus;
  /** Seq of the last published event (every order has at least its `created` event). */
  readonly lastSeq: number;
  readonly updatedAtUs: number;
  /** The newest tracking update's location and ETA, once there has been one. */
  readonly tracking?: Tracking;
  /**
   * The customer the order belongs to (set when it is created); only that customer and
   * holders of `orders:read:any` may read it. Every snapshot carries it, a reset's too.
   */
  readonly ownerId?: string;
}

/**
 * The order's state after `event`, from the state before it (`previous`, undefined when
 * unknown): what every event-derived snapshot (the bus's, a reset's) is built with.
 * `ownerId`, when given, is carried on it (the store and the bus pass the order's owner).
 *
 * Built by assigning the optional fields: this runs for every published event (in the
 * store and again in the bus), and on Node 20 (V8 11) a spread followed by another
 * property, `{ ...snapshot, ownerId }`, takes V8's slow runtime path. Optional fields are
 * absent, not undefined, in a fixed key order.
 */
export function snapshotAfter(
  previous: OrderSnapshot | undefined,
  event: OrderEvent,
  ownerId?: string,
): OrderSnapshot {
  const tracking: Tracking | undefined = isTrackingUpdate(event)
    ? { location: event.location, etaMs: event.etaMs }
    : previous?.tracking;
  const next: { -readonly [K in keyof OrderSnapshot]: OrderSnapshot[K] } = {
    orderId: event.orderId,
    status: event.status,
    lastSeq: event.seq,
    updatedAtUs: event.publishedAtUs,
  };
  if (tracking !== undefined) next.tracking = tracking;
  if (ownerId !== undefined) next.ownerId = ownerId;
  return next;
}

/**
 * Sent instead of events when a resume point cannot be served without a gap: the client
 * replaces its view with `snapshot` and continues from `snapshot.lastSeq`.
 */
export interface StreamReset {
  readonly reason: ResetReason;
  readonly snapshot: OrderSnapshot;
}

/**
 * What a subscriber receives, in order: status changes (`event`) and tracking updates
 * (`tracking`) share one seq sequence; `reset` and `skipped` say what was not delivered.
 */
export type StreamItem =
  | { readonly kind: 'event'; readonly event: OrderStatusChanged }
  | { readonly kind: 'tracking'; readonly tracking: TrackingUpdated }
  | { readonly kind: 'reset'; readonly reset: StreamReset }
  | { readonly kind: 'skipped'; readonly skipped: StreamSkipped };

/**
 * The client's cursor after it has received `item`: the seq to resume after. Every
 * transport's resume point (SSE `id:`, long-poll `next`, gRPC `resume-after-seq`) is this.
 */
export function cursorAfter(item: StreamItem): number {
  if (item.kind === 'reset') return item.reset.snapshot.lastSeq;
  if (item.kind === 'skipped') return item.skipped.toSeq;
  return (eventOf(item) as OrderEvent).seq;
}

/**
 * An event's name on the JSON transports: the SSE `event:` field, the socket.io event
 * name, and the `type` of a long-poll answer's element (gRPC: the SubscribeResponse arm,
 * `event` or `tracking`).
 */
export type EventName = 'status' | 'tracking';

/** An item's body on the JSON transports: the field named like its kind (`{kind, [kind]}`). */
export function wirePayloadOf(item: StreamItem): object {
  return (item as unknown as Record<string, object>)[item.kind];
}

/** One element of a long-poll answer's `events`: the event with its name. */
export type NamedEvent =
  | ({ readonly type: 'status' } & OrderStatusChanged)
  | ({ readonly type: 'tracking' } & TrackingUpdated);

/** The stream item that delivers `event` (its kind follows the event's). */
export function itemOf(event: OrderEvent): StreamItem {
  return isTrackingUpdate(event) ? { kind: 'tracking', tracking: event } : { kind: 'event', event };
}

/**
 * The event an item delivers, whatever its kind (every event item is `{ kind, [kind]:
 * event }`); undefined for a reset or skipped range.
 */
export function eventOf(item: StreamItem): OrderEvent | undefined {
  if (item.kind === 'reset' || item.kind === 'skipped') return undefined;
  return (item as unknown as Readonly<Record<string, OrderEvent>>)[item.kind];
}
