import type { DomainEvent, DomainSnapshot } from '@app/contracts';
import type { StoreResync } from '@app/store/stream-store';
import type { StreamState } from './stream-state';
import type { ReplayRing } from './replay-ring';
import type { Subscriber } from './subscriber';

/** One order's slice of the bus: its replay ring, its current state and its subscribers. */
export interface StreamChannel<E extends DomainEvent, S extends DomainSnapshot> {
  readonly ring: ReplayRing<E>;
  readonly subscribers: Set<Subscriber<E, S>>;
  /**
   * `subscribers` as an array, for the fan-out: built at the first event after the set
   * changed and reused for every event until the next change, so an event costs no
   * iterator, and an order with many subscribers no copy of them, per event.
   */
  fanout?: readonly Subscriber<E, S>[];
  /** The order's state as far as this instance has applied it (built only when read). */
  readonly state: StreamState<E, S>;
  /**
   * The store's snapshot while an open reads it (the state was not known): the feed's
   * events may make the state known meanwhile without what came before them, so another
   * open waits for this read rather than take that state.
   */
  reading?: Promise<S | undefined>;
  /** The store's answer on the owner while it is asked (the state does not know it yet). */
  owning?: Promise<void>;
  /** Runs while the channel has no subscribers: it goes when this fires. */
  evictTimer?: NodeJS.Timeout;
  /**
   * With a routing store: resolves once the store's feed carries this order's events;
   * every open awaits it before reading the snapshot and history.
   */
  readonly watching: Promise<void> | undefined;
  /** The store could not subscribe: the channel is dropped with its last subscriber. */
  watchFailed?: boolean;
  /**
   * Set while the channel is being repaired from the store (a backfill or a resync):
   * live events that arrive meanwhile wait here, so subscribers still get them in order.
   */
  held?: E[];
  /**
   * A store resync that came while a repair was already running. That repair's reads may
   * have been answered before the events the feed missed were written, so it cannot stand
   * in for this one: the repair runs again before the held events are released.
   */
  resyncPending?: StoreResync;
}
