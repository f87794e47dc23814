import type { OrderStatusChanged, TrackingUpdated } from './order-events';

/**
 * The domain's events on socket.io, by wire name (`ORDER_DOMAIN.kinds`), for the typed
 * event map of the `/orders` namespace: each in seq order, sharing one sequence.
 */
export interface DomainSocketEvents {
  /** A status change of a subscribed order. */
  status: (event: OrderStatusChanged) => void;
  /** A tracking update of a subscribed order. */
  tracking: (tracking: TrackingUpdated) => void;
}
