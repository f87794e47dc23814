import {
  IdempotencyKeyReused,
  isTrackingUpdate,
  type OrderEvent,
  type OrderStatus,
  type OrderStatusChanged,
  type Tracking,
  type TrackingUpdated,
} from '@app/contracts';

/**
 * @default 300_000 ms a publish's idempotency key is remembered: longer than any sensible
 * client retry loop (the README advises seconds), short enough that the store keeps few.
 */
export const DEFAULT_IDEMPOTENCY_WINDOW_MS = 300_000;

/** Events a store answered from its idempotency record instead of publishing anew. */
const replays = new WeakSet<OrderEvent>();

function keyReused(original: OrderEvent): IdempotencyKeyReused {
  const used = isTrackingUpdate(original) ? 'a tracking update' : `status ${original.status}`;
  return new IdempotencyKeyReused(
    `this idempotency key was already used for ${used} on order ${original.orderId} with ` +
      'another request; a repeat must send the same body (use a new key for a new change)',
  );
}

/** What a status publish asked for, compared field by field with a repeat's first publish. */
export interface StatusRequest {
  readonly status: OrderStatus;
  readonly reason?: string;
  readonly paddingBytes?: number;
  readonly ownerId?: string;
}

/** A tracking update as asked for, compared the same way. */
export interface TrackingRequest extends Tracking {
  readonly paddingBytes?: number;
}

/**
 * Whether `original` created its order: a repeat of it must then name the same owner,
 * which the store keeps with the order rather than in the event.
 */
export function createdOrder(original: OrderEvent): boolean {
  return !isTrackingUpdate(original) && original.previousStatus === undefined;
}

function samePadding(original: OrderEvent, paddingBytes: number | undefined): boolean {
  return (original.padding?.length ?? 0) === (paddingBytes ?? 0);
}

function marked<T extends OrderEvent>(original: T): T {
  const replay = { ...original };
  replays.add(replay);
  return replay;
}

/**
 * Answers a repeated idempotency key of a status change with the event its first publish
 * made (a fresh object, marked as a replay, so the first caller's object stays unmarked).
 * The key covers the whole request: status, reason, padding and, when the first publish
 * created the order, its owner (`ownerOfOrder`, the store's; see createdOrder).
 * @throws IdempotencyKeyReused when any of them differs, or the key was used for a
 *   tracking update.
 */
export function replayOf(
  original: OrderEvent,
  request: StatusRequest,
  ownerOfOrder: string | undefined,
): OrderStatusChanged {
  if (
    isTrackingUpdate(original) ||
    original.status !== request.status ||
    original.reason !== request.reason ||
    !samePadding(original, request.paddingBytes) ||
    (createdOrder(original) && request.ownerId !== undefined && request.ownerId !== ownerOfOrder)
  ) {
    throw keyReused(original);
  }
  return marked(original);
}

/** The same for a tracking update: the repeat must carry the same location, ETA and padding. */
export function replayTrackingOf(original: OrderEvent, update: TrackingRequest): TrackingUpdated {
  if (
    !isTrackingUpdate(original) ||
    original.location.lat !== update.location.lat ||
    original.location.lon !== update.location.lon ||
    original.etaMs !== update.etaMs ||
    !samePadding(original, update.paddingBytes)
  ) {
    throw keyReused(original);
  }
  return marked(original);
}

/**
 * Whether a publish answered with an earlier publish's event because its idempotency key
 * was repeated (HTTP says so with `Idempotent-Replayed: true`, gRPC with `replayed`).
 */
export function isReplay(event: OrderEvent): boolean {
  return replays.has(event);
}
