import { ResetReason } from '@app/contracts';
import { OverflowPolicy } from './bus-options';

/**
 * Monotonic counters kept by the bus. Plain numbers, so the library needs no metrics
 * dependency; the service's metrics module reads them at scrape time.
 */
export class BusStats {
  /** Events received from the store and fanned out. */
  eventsIngested = 0;
  /**
   * Events of orders this instance no longer serves, from a routing store: messages that
   * crossed an unsubscribe (anything more means the routing is off).
   */
  eventsNotServed = 0;
  /** Events received twice from the store (already seen seq), ignored. */
  duplicatesIgnored = 0;
  /** Items handed to a transport's sink. */
  itemsDelivered = 0;
  /** Times a gap in the feed made the bus read the store's history before fanning out. */
  backfills = 0;
  /** Events recovered from the store's history by those backfills. */
  eventsBackfilled = 0;
  /** Store resyncs handled (reconnections), and how many of them found the data lost. */
  storeResyncs = 0;
  storeDataLost = 0;
  /** Events replayed to resuming subscribers. */
  eventsReplayed = 0;
  /**
   * Events dropped by a full subscriber queue, by policy. Under `conflate` and
   * `drop-oldest` each one reaches its client as a `skipped` range or inside a reset;
   * under `disconnect` the stream ends and the client resumes.
   */
  readonly overflowDropped: Record<OverflowPolicy, number> = {
    [OverflowPolicy.Conflate]: 0,
    [OverflowPolicy.DropOldest]: 0,
    [OverflowPolicy.Disconnect]: 0,
  };
  /** Queue overflows (each time the policy had to act), by policy. */
  readonly overflows: Record<OverflowPolicy, number> = {
    [OverflowPolicy.Conflate]: 0,
    [OverflowPolicy.DropOldest]: 0,
    [OverflowPolicy.Disconnect]: 0,
  };
  /** Resets sent, by reason. */
  readonly resets: Record<ResetReason, number> = {
    [ResetReason.BeyondRetention]: 0,
    [ResetReason.AheadOfLastSeq]: 0,
    [ResetReason.Gap]: 0,
    [ResetReason.Overflow]: 0,
  };
  /**
   * Events clients were told they missed (the seqs of the `skipped` items handed to a
   * sink), by transport label and overflow policy. Events folded into an `overflow`
   * reset (queues of capacity 1 or 2) are counted in `resets.overflow` instead.
   */
  readonly skippedByTransport = new Map<string, Record<OverflowPolicy, number>>();
  /** Subscriptions opened with a non-zero resume point. */
  resumes = 0;
  private readonly deliveries = new Map<string, DeliveryCounter>();
  /** Open subscriptions, by transport label. */
  readonly subscriptionsByTransport = new Map<string, number>();
  /** Open client connections, by transport label (reported by the transports). */
  readonly connectionsByTransport = new Map<string, number>();
  /**
   * Called for every live event right after a transport's sink took it, with the event's
   * publish time, so the metrics module can keep a publish-to-write latency histogram
   * without the bus depending on it. Replayed events are not reported: their age is the
   * time the client was away, not delivery latency. The callback runs on the hot path:
   * it must not allocate or throw.
   */
  onDeliver?: (transport: string, publishedAtUs: number) => void;

  /**
   * The delivery counter of a transport label (`grpc`, `sse`, `ws`, `long-poll`, ...),
   * looked up once per subscription: the hot path then bumps a field, with no Map
   * lookup per delivered item.
   */
  deliveryCounter(transport: string): DeliveryCounter {
    let counter = this.deliveries.get(transport);
    if (counter === undefined) {
      counter = { count: 0 };
      this.deliveries.set(transport, counter);
    }
    return counter;
  }

  /** Items delivered, by transport label; built when read (metrics scrapes, tests). */
  get deliveredByTransport(): ReadonlyMap<string, number> {
    return new Map([...this.deliveries].map(([transport, c]) => [transport, c.count]));
  }

  /** Called when a sink took a `skipped` item covering `events` seqs (rare: overflow only). */
  countSkipped(transport: string, policy: OverflowPolicy, events: number): void {
    let byPolicy = this.skippedByTransport.get(transport);
    if (byPolicy === undefined) {
      byPolicy = {
        [OverflowPolicy.Conflate]: 0,
        [OverflowPolicy.DropOldest]: 0,
        [OverflowPolicy.Disconnect]: 0,
      };
      this.skippedByTransport.set(transport, byPolicy);
    }
    byPolicy[policy] += events;
  }

  connectionOpened(transport: string): void {
    bump(this.connectionsByTransport, transport, 1);
  }

  connectionClosed(transport: string): void {
    bump(this.connectionsByTransport, transport, -1);
  }
}

export interface DeliveryCounter {
  count: number;
}

export function bump(map: Map<string, number>, key: string, by: number): void {
  map.set(key, (map.get(key) ?? 0) + by);
}
