import { ENVELOPE_ITEM_KINDS, type StreamDomain } from '@app/contracts/stream-domain';
import type { StreamItemOf } from '@app/contracts/stream-item';

/**
 * What the client needs of a domain to read the JSON transports: its kinds' names, and its
 * own, which every subscribe states so that a service of another domain refuses it.
 */
export type WireDomain = Pick<StreamDomain<never>, 'kinds' | 'name'>;

/**
 * The JSON transports name an item by its wire event (SSE `event:`, socket.io event
 * name); each payload is the item's body, under the field named like the item kind
 * (`{kind: 'reset', reset}`). An event's wire name is its kind's in the domain; names this
 * client does not know are ignored, so a newer service does not break an older client.
 */
function itemKindOf(domain: WireDomain, name: string): string | undefined {
  if (ENVELOPE_ITEM_KINDS.includes(name)) return name;
  return domain.kinds.find((k) => k.wireName === name)?.itemKind;
}

/** The wire names of stream items (for transports that subscribe per name). */
export function itemWireNames(domain: WireDomain): readonly string[] {
  return [...domain.kinds.map((k) => k.wireName), ...ENVELOPE_ITEM_KINDS];
}

/** The wire name of an untagged long-poll event (a service from before kinds had names). */
export function defaultWireName(domain: WireDomain): string {
  return (domain.kinds.at(-1) as WireDomain['kinds'][number]).wireName;
}

/** The item for a wire event, undefined for names that are not items (`end`, unknown). */
export function wireItem(
  domain: WireDomain,
  name: string,
  payload: unknown,
): StreamItemOf | undefined {
  const kind = itemKindOf(domain, name);
  if (kind === undefined) return undefined;
  if (typeof payload !== 'object' || payload === null) {
    throw new TypeError(`malformed '${name}' payload`);
  }
  return { kind, [kind]: payload } as StreamItemOf;
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
