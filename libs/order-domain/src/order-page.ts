import { ORDER_DESCRIPTOR } from './order-descriptor';
import { isTerminalStatus, ORDER_STATUS_SEQUENCE, ORDER_STATUSES } from './order-status';

/**
 * What the demo page (apps/order-status/public) shows of the domain, as plain JSON:
 * `npm run build:client` writes it to public/assets/order-domain.js, so the page's names
 * and labels come from here rather than from a copy in the page's script.
 */
export interface OrderPageDescriptor {
  readonly name: string;
  /** Each event kind: the item it travels in and its name on the JSON transports. */
  readonly kinds: readonly { readonly itemKind: string; readonly wireName: string }[];
  /** The statuses an order moves forward through, the page's stepper. */
  readonly statusPath: readonly string[];
  /** Statuses that finish an order (the ones off `statusPath` end it early). */
  readonly terminalStatuses: readonly string[];
  /** How each status reads on the page. */
  readonly statusLabels: Readonly<Record<string, string>>;
}

export const ORDER_PAGE: OrderPageDescriptor = {
  name: ORDER_DESCRIPTOR.name,
  kinds: ORDER_DESCRIPTOR.kinds.map(({ itemKind, wireName }) => ({ itemKind, wireName })),
  statusPath: ORDER_STATUS_SEQUENCE,
  terminalStatuses: ORDER_STATUSES.filter(isTerminalStatus),
  statusLabels: Object.fromEntries(ORDER_STATUSES.map((s) => [s, s.replaceAll('_', ' ')])),
};
