import { Inject, Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { OVERFLOW_POLICIES, OrderEventBus } from '@app/event-bus';
import { ResetReason } from '@app/contracts';

const RESET_REASONS = Object.values(ResetReason);

/**
 * The Prometheus registry. Bus figures are plain counters kept by the bus and read at
 * scrape time (collect callbacks), so the hot path pays nothing for metrics.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  constructor(@Inject(OrderEventBus) bus: OrderEventBus) {
    // Includes event-loop lag (nodejs_eventloop_lag_*), GC, heap and process CPU/RSS.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
    const stats = bus.stats;
    const registers = [this.registry];

    new Gauge({
      name: 'order_bus_subscribers',
      help: 'Open bus subscriptions, by transport',
      labelNames: ['transport'],
      registers,
      collect() {
        this.reset();
        for (const [t, n] of stats.subscriptionsByTransport) this.set({ transport: t }, n);
      },
    });
    new Gauge({
      name: 'order_transport_connections',
      help: 'Open client connections, by transport',
      labelNames: ['transport'],
      registers,
      collect() {
        this.reset();
        for (const [t, n] of stats.connectionsByTransport) this.set({ transport: t }, n);
      },
    });
    new Counter({
      name: 'order_deliveries_total',
      help: 'Stream items handed to a transport, by transport',
      labelNames: ['transport'],
      registers,
      collect() {
        this.reset();
        for (const [t, n] of stats.deliveredByTransport) this.inc({ transport: t }, n);
      },
    });
    new Counter({
      name: 'order_events_ingested_total',
      help: 'Events received by the bus from the store',
      registers,
      collect() {
        this.reset();
        this.inc(stats.eventsIngested);
      },
    });
    new Counter({
      name: 'order_events_replayed_total',
      help: 'Events replayed to resuming subscribers',
      registers,
      collect() {
        this.reset();
        this.inc(stats.eventsReplayed);
      },
    });
    new Counter({
      name: 'order_resumes_total',
      help: 'Subscriptions opened with a resume point',
      registers,
      collect() {
        this.reset();
        this.inc(stats.resumes);
      },
    });
    new Counter({
      name: 'order_resets_total',
      help: 'Resets sent instead of a replay, by reason',
      labelNames: ['reason'],
      registers,
      collect() {
        this.reset();
        for (const r of RESET_REASONS) this.inc({ reason: r }, stats.resets[r]);
      },
    });
    new Counter({
      name: 'order_queue_overflows_total',
      help: 'Times a subscriber queue was full and its overflow policy acted, by policy',
      labelNames: ['policy'],
      registers,
      collect() {
        this.reset();
        for (const p of OVERFLOW_POLICIES) this.inc({ policy: p }, stats.overflows[p]);
      },
    });
    new Counter({
      name: 'order_queue_dropped_events_total',
      help: 'Events discarded by subscriber queue overflow, by policy',
      labelNames: ['policy'],
      registers,
      collect() {
        this.reset();
        for (const p of OVERFLOW_POLICIES) this.inc({ policy: p }, stats.overflowDropped[p]);
      },
    });
  }
}
