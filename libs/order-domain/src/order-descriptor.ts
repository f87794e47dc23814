import type { DomainDescriptor } from '@app/contracts/stream-domain';
import {
  isTrackingUpdate,
  snapshotAfter,
  type OrderEvent,
  type OrderSnapshot,
} from './order-events';
import { isTerminalStatus } from './order-status';

// Imported file by file, not through '@app/contracts': the browser build of the client
// takes this module and must not pull in the contracts' Node-only files, nor the proto codec.

/**
 * The order domain without its protobuf codec (ORDER_DOMAIN adds it): status changes
 * (`status`) and tracking updates (`tracking`) on one stream per order, finished by
 * `delivered` or `cancelled`.
 */
export const ORDER_DESCRIPTOR: DomainDescriptor<OrderEvent, OrderSnapshot> = {
  name: 'order',
  kinds: [
    { itemKind: 'tracking', wireName: 'tracking', protoArm: 'tracking', is: isTrackingUpdate },
    // A status change travels as the item `event` and the proto arm `event` (the first
    // kind, named before tracking existed), and as `status` on the JSON transports.
    { itemKind: 'event', wireName: 'status', protoArm: 'event', is: (e) => !isTrackingUpdate(e) },
  ],
  isTerminal: (event) => isTerminalStatus(event.status),
  isTerminalSnapshot: (snapshot) => isTerminalStatus(snapshot.status),
  fold: snapshotAfter,
};
