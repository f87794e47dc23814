import { isTrackingUpdate, type OrderEvent, type OrderSnapshot } from './order-events';

/**
 * What the watch CLI prints of an order's event after its seq, kind and latency: the new
 * status (and why), or where a tracking update places the order and its ETA.
 */
export function orderSummary(event: OrderEvent): string {
  if (!isTrackingUpdate(event)) {
    return event.reason ? `${event.status} (${event.reason})` : event.status;
  }
  const where = `${event.location.lat.toFixed(4)},${event.location.lon.toFixed(4)}`;
  return `at ${where}, eta ${new Date(event.etaMs).toISOString().slice(11, 16)}Z`;
}

/** A reset's snapshot in a word: the order's status. */
export function orderSnapshotSummary(snapshot: OrderSnapshot): string {
  return snapshot.status;
}
