import {
  ErrorCode,
  GatewayError,
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

function keyReused(original: OrderEvent, wanted: string): GatewayError {
  const used = isTrackingUpdate(original) ? 'a tracking update' : `status ${original.status}`;
  return new GatewayError(
    ErrorCode.FailedPrecondition,
    `this idempotency key was already used for ${used} on order ${original.orderId}; a ` +
      `repeat must send the same ${wanted} (use a new key for a new change)`,
  );
}

function marked<T extends OrderEvent>(original: T): T {
  const replay = { ...original };
  replays.add(replay);
  return replay;
}

/**
 * Answers a repeated idempotency key of a status change with the event its first publish
 * made (a fresh object, marked as a replay, so the first caller's object stays unmarked).
 * @throws GatewayError FailedPrecondition when the repeat asks for another status, or the
 *   key was used for a tracking update: the key names one request, and what that request
 *   did cannot change.
 */
export function replayOf(original: OrderEvent, status: OrderStatus): OrderStatusChanged {
  if (isTrackingUpdate(original) || original.status !== status) {
    throw keyReused(original, 'status');
  }
  return marked(original);
}

/** The same for a tracking update: the repeat must carry the same location and ETA. */
export function replayTrackingOf(original: OrderEvent, update: Tracking): TrackingUpdated {
  if (
    !isTrackingUpdate(original) ||
    original.location.lat !== update.location.lat ||
    original.location.lon !== update.location.lon ||
    original.etaMs !== update.etaMs
  ) {
    throw keyReused(original, 'location and ETA');
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
