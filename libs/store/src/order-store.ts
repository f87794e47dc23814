import type { OrderEvent, OrderSnapshot } from '@app/order-domain';
import { StreamStore } from './stream-store';

/**
 * The store the service runs on, under the order domain's types, and its DI token: the
 * order domain publishes through its generic `append` (`publishStatus`,
 * `publishTracking` in libs/order-domain). Implementations: the in-memory store
 * (embedded default) and a Redis store (several instances).
 */
export abstract class OrderStore extends StreamStore<OrderEvent, OrderSnapshot> {}
