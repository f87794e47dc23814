import type { StreamItem } from '@app/contracts/order-events';

/**
 * The JSON transports name an item by its wire event (SSE `event:`, socket.io event
 * name); each payload is the item's body, under the field named like the item kind
 * (`{kind: 'reset', reset}`). Only the status change has another wire name (`status`).
 * A kind the contracts add is one entry here; names this client does not know are ignored, so a
 * newer service does not break an older client.
 */
const KIND_BY_WIRE_NAME: Readonly<Record<string, StreamItem['kind']>> = {
  status: 'event',
  reset: 'reset',
  skipped: 'skipped',
  tracking: 'tracking',
};

/** The wire names of stream items (for transports that subscribe per name). */
export const ITEM_WIRE_NAMES: readonly string[] = Object.keys(KIND_BY_WIRE_NAME);

/** The item for a wire event, undefined for names that are not items (`end`, unknown). */
export function wireItem(name: string, payload: unknown): StreamItem | undefined {
  const kind = KIND_BY_WIRE_NAME[name];
  if (kind === undefined) return undefined;
  if (typeof payload !== 'object' || payload === null) {
    throw new TypeError(`malformed '${name}' payload`);
  }
  return { kind, [kind]: payload } as unknown as StreamItem;
}

/** socket.io `skipped` carries its order id beside the range; the item has none. */
export function withoutOrderId(payload: unknown): unknown {
  if (typeof payload !== 'object' || payload === null) return payload;
  const { orderId: _orderId, ...rest } = payload as Record<string, unknown>;
  return rest;
}

/** The order an item's payload belongs to (socket.io multiplexes orders on one socket). */
export function payloadOrderId(name: string, payload: unknown): unknown {
  const p = payload as { orderId?: unknown; snapshot?: { orderId?: unknown } } | null;
  return name === 'reset' ? p?.snapshot?.orderId : p?.orderId;
}
