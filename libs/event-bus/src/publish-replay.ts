import { ErrorCode, GatewayError, type OrderStatus, type OrderStatusChanged } from '@app/contracts';

/**
 * @default 300_000 ms a publish's idempotency key is remembered: longer than any sensible
 * client retry loop (the README advises seconds), short enough that the store keeps few.
 */
export const DEFAULT_IDEMPOTENCY_WINDOW_MS = 300_000;

/** Events a store answered from its idempotency record instead of publishing anew. */
const replays = new WeakSet<OrderStatusChanged>();

/**
 * Answers a repeated idempotency key with the event its first publish made (a fresh
 * object, marked as a replay, so the first caller's object stays unmarked).
 * @throws GatewayError FailedPrecondition when the repeat asks for another status: the key
 *   names one request, and what that request did cannot change.
 */
export function replayOf(original: OrderStatusChanged, status: OrderStatus): OrderStatusChanged {
  if (original.status !== status) {
    throw new GatewayError(
      ErrorCode.FailedPrecondition,
      `this idempotency key was already used for status ${original.status} on order ` +
        `${original.orderId}; a repeat must send the same status (use a new key for a new change)`,
    );
  }
  const replay = { ...original };
  replays.add(replay);
  return replay;
}

/**
 * Whether `publish()` answered with an earlier publish's event because its idempotency key
 * was repeated (HTTP says so with `Idempotent-Replayed: true`, gRPC with `replayed`).
 */
export function isReplay(event: OrderStatusChanged): boolean {
  return replays.has(event);
}
