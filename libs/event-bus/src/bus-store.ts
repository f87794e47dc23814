import type { DomainEvent, DomainSnapshot } from '@app/contracts';
import type { StreamStore } from '@app/store/stream-store';

/**
 * What the bus reads of a store: the domain, the feed of published events (and its
 * resyncs), the trace context an event was published with, snapshots (an in-process
 * store's synchronously too), owners (a reset's snapshot carries one, and the feed's events
 * do not), history and routing. The bus never publishes, so any `StreamStore` is one,
 * whatever its publish API, and so is a spec's hand-driven feed.
 */
export type BusStore<E extends DomainEvent, S extends DomainSnapshot> = Pick<
  StreamStore<E, S>,
  | 'domain'
  | 'events$'
  | 'resync$'
  | 'traceContextOf'
  | 'getSnapshot'
  | 'getSnapshotSync'
  | 'getOwnership'
  | 'readHistory'
  | 'watch'
  | 'unwatch'
>;
