import type { StreamDomain } from '@app/contracts/stream-domain';
import { ORDER_DESCRIPTOR } from './order-descriptor';
import type { OrderEvent, OrderSnapshot } from './order-events';
import { ORDER_PROTO_CODEC } from './proto-codec';
import { ORDER_APPEND } from './order-publish';
import { orderSnapshotSummary, orderSummary } from './order-summary';

/**
 * The order domain as the engine takes it: its descriptor (kinds, terminal rule, fold),
 * its protobuf codec and the watch CLI's summaries. A browser client takes
 * ORDER_DESCRIPTOR alone.
 */
export const ORDER_DOMAIN: StreamDomain<OrderEvent, OrderSnapshot> = {
  ...ORDER_DESCRIPTOR,
  proto: ORDER_PROTO_CODEC,
  append: ORDER_APPEND,
  summary: orderSummary,
  snapshotSummary: orderSnapshotSummary,
};
