import { RunMetrics, Subscriber } from '../clients/subscriber';
import type { Connector, TransportName } from '../clients/transport';
import type { WireEvent } from '../clients/wire-types';
import { epochUs } from '../stats/latency';

/**
 * A load-test subscriber that also remembers, per seq, which event it holds (its publish
 * time) and when each event arrived: after a lossy failover Redis hands lost seqs to new
 * events, so a seq alone cannot tell whether a client holds Redis's event or one Redis
 * lost; the arrival times give the time to recover.
 */
export class WatchedSubscriber {
  readonly subscriber: Subscriber;
  /**
   * seq -> the event held for that seq (its publish time; a later event replaces it) and
   * how many resets the client had had when it arrived: a reset replaces everything the
   * client held with a snapshot, so only events since the last reset are the client's.
   */
  private readonly held = new Map<number, { at: number; resets: number }>();
  /** [publishedAtUs, arrival epoch us] of every event received. */
  private readonly arrivals: [number, number][] = [];

  constructor(
    readonly transport: TransportName,
    readonly instance: string,
    readonly orderId: string,
    connector: Connector,
    metrics: RunMetrics,
  ) {
    this.subscriber = new Subscriber(orderId, 0, connector, metrics, {
      reconnect: true,
      onEvent: (e: WireEvent) => {
        this.held.set(e.seq, { at: e.publishedAtUs, resets: this.resets });
        this.arrivals.push([e.publishedAtUs, epochUs()]);
      },
    });
  }

  /**
   * ms from `atUs` (epoch) until the first event published after it arrived, or undefined
   * if none did: events published before the fault and delivered late do not count.
   */
  recoveredAfter(atUs: number): number | undefined {
    const a = this.arrivals.find(([published]) => published > atUs);
    return a === undefined ? undefined : (a[1] - atUs) / 1_000;
  }

  /**
   * Seqs this client holds an event for that Redis now keeps another event under: it was
   * neither told (reset) nor given the replacement. `history` maps seq -> publishedAtUs.
   */
  divergentFrom(history: ReadonlyMap<number, number>): number {
    const resets = this.resets;
    let n = 0;
    for (const [seq, e] of this.held) {
      const kept = history.get(seq);
      if (e.resets === resets && kept !== undefined && kept !== e.at) n++;
    }
    return n;
  }

  get resets(): number {
    return this.subscriber.tracker.counts().resets;
  }
}
