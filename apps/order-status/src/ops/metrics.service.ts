import { getHeapStatistics } from 'node:v8';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { OVERFLOW_POLICIES, StreamEventBus } from '@app/event-bus';
import { StreamStore } from '@app/store';
import { ResetReason } from '@app/contracts';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { DeliveryLatencyHistogram } from './delivery-latency';
import { countEveryGc } from './gc-histogram';
import { registerMemoryMetrics, type MemorySource } from './memory-metrics';

const RESET_REASONS = Object.values(ResetReason);

/** Labels of `order_auth_failures_total`. */
export type AuthFailureLabels = 'transport' | 'reason';

/**
 * The Prometheus registry. Bus figures are plain counters kept by the bus and read at
 * scrape time (collect callbacks), so the hot path pays nothing for metrics; the one
 * per-event figure, delivery latency, goes through an allocation-free hook.
 */
@Injectable()
export class MetricsService implements OnModuleDestroy {
  readonly registry = new Registry();

  private readonly stopGcHistogram: () => void;

  /**
   * Rejected credentials, by transport (`grpc`, `sse`, `ws`, `long-poll`, `http`) and
   * reason (`missing`, `invalid`, `expired`, `forbidden`, ...): the auth layer calls
   * `authFailures.inc({ transport, reason })`. Keep reasons a small fixed set: every
   * distinct value is a time series.
   */
  readonly authFailures: Counter<AuthFailureLabels>;

  /** Publish-to-write latency of live events, by transport. */
  readonly deliveryLatency: DeliveryLatencyHistogram;

  /**
   * Adds structures clients can grow to `order_memory_*{structure}` (the store's are
   * there already): each module that owns one calls it once.
   */
  readonly trackMemory: (source: MemorySource) => void;

  constructor(
    @Inject(StreamEventBus) bus: StreamEventBus,
    @Inject(StreamStore) store: StreamStore,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    // What serving pays for metrics, turned off together by BENCHMARK_LAYERS_OFF=metrics.
    const serving = config.benchmark.metrics;
    // Includes event-loop lag (nodejs_eventloop_lag_*), GC, heap and process CPU/RSS.
    if (serving) {
      collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
    }
    // prom-client's GC histogram misses all but the first of a burst of collections.
    this.stopGcHistogram = serving ? countEveryGc(this.registry) : () => undefined;
    const stats = bus.stats;
    const registers = [this.registry];

    this.deliveryLatency = new DeliveryLatencyHistogram({
      name: 'order_delivery_latency_seconds',
      help: 'Time from publish to the write on the client connection, live events, by transport',
      registers,
    });
    const latency = this.deliveryLatency;
    this.trackMemory = registerMemoryMetrics(this.registry);
    this.trackMemory(() => store.memoryUse?.() ?? []);
    if (serving) {
      stats.onDeliver = (transport, publishedAtUs) => latency.record(transport, publishedAtUs);
    }

    this.authFailures = new Counter({
      name: 'order_auth_failures_total',
      help: 'Requests and connections refused for their credentials, by transport and reason',
      labelNames: ['transport', 'reason'],
      registers,
    });

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
    new Gauge({
      name: 'order_queue_depth',
      help: 'Items waiting in subscriber queues (replay backlog plus live queue), by transport',
      labelNames: ['transport'],
      registers,
      collect() {
        this.reset();
        // Transports with subscriptions but nothing queued report 0, not nothing.
        for (const t of stats.subscriptionsByTransport.keys()) this.set({ transport: t }, 0);
        for (const [t, n] of bus.pendingByTransport()) this.set({ transport: t }, n);
      },
    });
    new Gauge({
      name: 'order_store_up',
      help: 'Whether the order store can serve publishes and reads (1) or not (0), by backend',
      labelNames: ['backend'],
      registers,
      collect() {
        this.reset();
        this.set({ backend: storeBackend(store) }, (store.health?.() ?? 'up') === 'up' ? 1 : 0);
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
    const heapAllocated = heapAllocatedBytes();
    if (heapAllocated !== undefined) {
      new Counter({
        name: 'nodejs_heap_allocated_bytes_total',
        help: 'Bytes the JavaScript heap has allocated since the process started (V8), collected or not',
        registers,
        collect() {
          this.reset();
          this.inc(heapAllocatedBytes() ?? 0);
        },
      });
    }
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
      name: 'order_events_not_served_total',
      help: 'Events of orders this instance does not serve that still reached it (routed store: ~0)',
      registers,
      collect() {
        this.reset();
        this.inc(stats.eventsNotServed);
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
      name: 'order_events_skipped_total',
      help: 'Events clients were told they missed (skipped items), by transport and overflow policy',
      labelNames: ['transport', 'policy'],
      registers,
      collect() {
        this.reset();
        for (const [t, byPolicy] of stats.skippedByTransport) {
          for (const p of OVERFLOW_POLICIES) this.inc({ transport: t, policy: p }, byPolicy[p]);
        }
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

  onModuleDestroy(): void {
    this.stopGcHistogram();
  }
}

/** `memory`, `redis`, ...: from the store's class name, so no store has to declare it. */
export function storeBackend(store: StreamStore): string {
  const name = store.constructor.name.replace(/StreamStore$/, '').replace(/Store$/, '');
  return name === 'InMemory' ? 'memory' : name.toLowerCase() || 'unknown';
}

/**
 * V8's running total of heap allocation (`total_allocated_bytes`: Node 26 reports it, Node
 * 20 does not). Allocation drives the young-generation collections, which are much of a
 * request's cost; unlike CPU time it does not move with the host's speed, so the load
 * test reads it per delivered event. Undefined where the runtime has no such figure.
 */
export function heapAllocatedBytes(): number | undefined {
  const total = (getHeapStatistics() as { total_allocated_bytes?: unknown }).total_allocated_bytes;
  return typeof total === 'number' ? total : undefined;
}
