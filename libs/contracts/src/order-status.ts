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
 * Whether `next` may follow `current` (undefined: the order does not exist yet).
 * - a new order starts at `created`;
 * - statuses move forward; repeating the current status is allowed (a tracking update,
 *   e.g. another carrier scan while `shipped`), which is what lets the simulator and the
 *   load test publish many events per order without finishing it;
 * - `cancelled` may follow any non-terminal status;
 * - nothing follows a terminal status.
 */
export function canTransition(current: OrderStatus | undefined, next: OrderStatus): boolean {
  if (current === undefined) return next === OrderStatus.Created;
  if (isTerminalStatus(current)) return false;
  if (next === OrderStatus.Cancelled) return true;
  return ORDER_STATUS_SEQUENCE.indexOf(next) >= ORDER_STATUS_SEQUENCE.indexOf(current);
}
