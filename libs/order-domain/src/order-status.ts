/**
 * The order life cycle. The string values are what the JSON transports (SSE, socket.io,
 * long-poll, REST) carry; gRPC carries the proto enum (see `proto-codec.ts`).
 */
export enum OrderStatus {
  Created = 'created',
  Paid = 'paid',
  Packed = 'packed',
  Shipped = 'shipped',
  OutForDelivery = 'out_for_delivery',
  Delivered = 'delivered',
  Cancelled = 'cancelled',
}

/** Statuses in life-cycle order; an order only moves forward through this list. */
export const ORDER_STATUS_SEQUENCE: readonly OrderStatus[] = [
  OrderStatus.Created,
  OrderStatus.Paid,
  OrderStatus.Packed,
  OrderStatus.Shipped,
  OrderStatus.OutForDelivery,
  OrderStatus.Delivered,
];

export const ORDER_STATUSES: readonly OrderStatus[] = Object.values(OrderStatus);

export function isOrderStatus(value: unknown): value is OrderStatus {
  return typeof value === 'string' && (ORDER_STATUSES as readonly string[]).includes(value);
}

export function isTerminalStatus(status: OrderStatus): boolean {
  return status === OrderStatus.Delivered || status === OrderStatus.Cancelled;
}

/**
 * Statuses in which an order accepts tracking updates (`TrackingUpdated`): a parcel has a
 * location and an ETA from the moment it leaves the warehouse until it is delivered.
 * Before that there is nothing to track; after a terminal status nothing may change.
 */
export const TRACKING_STATUSES: readonly OrderStatus[] = [
  OrderStatus.Shipped,
  OrderStatus.OutForDelivery,
];

export function acceptsTracking(status: OrderStatus): boolean {
  return status === OrderStatus.Shipped || status === OrderStatus.OutForDelivery;
}

/**
 * Whether `next` may follow `current` (undefined: the order does not exist yet). Every
 * status change is a real change:
 * - a new order starts at `created`;
 * - statuses move strictly forward (steps may be skipped, e.g. `created` to `shipped`);
 *   repeating the current status is refused, so a client never receives an
 *   `OrderStatusChanged` that changes nothing (progress such as a carrier scan is a
 *   `TrackingUpdated`, see `acceptsTracking`);
 * - `cancelled` may follow any non-terminal status;
 * - nothing follows a terminal status.
 */
export function canTransition(current: OrderStatus | undefined, next: OrderStatus): boolean {
  if (current === undefined) return next === OrderStatus.Created;
  if (isTerminalStatus(current)) return false;
  if (next === OrderStatus.Cancelled) return true;
  return ORDER_STATUS_SEQUENCE.indexOf(next) > ORDER_STATUS_SEQUENCE.indexOf(current);
}

/**
 * Why a publish of `next` after `current` is refused, as one sentence for the error
 * message (the same words from every store and transport); undefined when it is allowed.
 */
export function transitionRefusal(
  orderId: string,
  current: OrderStatus,
  next: OrderStatus,
): string | undefined {
  if (canTransition(current, next)) return undefined;
  if (current === next) {
    return `order ${orderId} is already ${current}: a status change must change the status`;
  }
  return `order ${orderId} cannot move from ${current} to ${next}`;
}

/** Why a tracking update is refused in `status` (one sentence, the same from every store). */
export function trackingRefusal(orderId: string, status: OrderStatus): string {
  return (
    `order ${orderId} is ${status}: tracking updates are accepted while ` +
    `${TRACKING_STATUSES.join(' or ')}`
  );
}
