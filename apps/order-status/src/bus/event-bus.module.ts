import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
  type OnModuleInit,
  type Provider,
} from '@nestjs/common';
import { ORDER_DOMAIN, type OrderEvent, type OrderSnapshot } from '@app/order-domain';
import type { EventBusOptions } from '@app/event-bus';
import { StreamEventBus } from '@app/event-bus';
import type { StreamDomain } from '@app/contracts';
import { InMemoryStreamStore, StreamStore } from '@app/store';
import { OrderSimulator } from '../simulator/simulator';
import type { OrderTracing } from '../tracing/order-tracing';

export const EVENT_BUS_OPTIONS = Symbol('EVENT_BUS_OPTIONS');

/**
 * The bus as the order module sees it: this service carries the order domain. The
 * transports inject it as `StreamEventBus`, any domain's bus, and name events through
 * its descriptor.
 */
export type OrderBus = StreamEventBus<OrderEvent, OrderSnapshot>;

export interface EventBusModuleOptions extends EventBusOptions {
  /** The store; the embedded in-memory store when omitted. */
  store?: StreamStore;
  /** The embedded store's domain. @default the order domain */
  domain?: StreamDomain;
  /** The embedded store's idempotency window, in ms. @default 300_000 */
  idempotencyWindowMs?: number;
  /** The embedded store's idempotency keys, in estimated bytes. @default 33_554_432 */
  idempotencyMaxBytes?: number;
  /** Traces the simulator's publishes (tracing on). @default none */
  simulatorTracing?: OrderTracing;
}

export interface EventBusModuleAsyncOptions {
  imports?: DynamicModule['imports'];
  inject?: (string | symbol | (abstract new (...args: never[]) => unknown))[];
  useFactory: (...args: never[]) => EventBusModuleOptions | Promise<EventBusModuleOptions>;
}

/** Starts the bus with the application and stops it (and the simulator) on shutdown. */
@Injectable()
class EventBusLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(StreamEventBus) private readonly bus: StreamEventBus,
    @Inject(OrderSimulator) private readonly simulator: OrderSimulator,
    @Inject(StreamStore) private readonly store: StreamStore,
  ) {}

  onModuleInit(): void {
    this.bus.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.simulator.stop();
    this.bus.stop();
    await this.store.close?.();
  }
}

/**
 * Provides the store, the bus and the simulator to the whole application (global), each
 * under its class as DI token so transports depend on the abstraction only. The store's
 * token is the engine's `StreamStore`: the service carries one domain (STREAM_DOMAIN),
 * and Nest keys providers by class, which erases type arguments, so a domain's module
 * injects it under its own (`StreamStore<OrderEvent, OrderSnapshot>` in the order module).
 */
@Module({})
export class EventBusModule {
  static forRootAsync(opts: EventBusModuleAsyncOptions): DynamicModule {
    const providers: Provider[] = [
      { provide: EVENT_BUS_OPTIONS, useFactory: opts.useFactory, inject: opts.inject ?? [] },
      {
        provide: StreamStore,
        useFactory: (o: EventBusModuleOptions): StreamStore =>
          o.store ??
          new InMemoryStreamStore({
            domain: o.domain ?? ORDER_DOMAIN,
            historySize: o.ringSize,
            historyMaxAgeMs: o.ringMaxAgeMs,
            idempotencyWindowMs: o.idempotencyWindowMs,
            idempotencyMaxBytes: o.idempotencyMaxBytes,
          }),
        inject: [EVENT_BUS_OPTIONS],
      },
      {
        provide: StreamEventBus,
        useFactory: (store: StreamStore, o: EventBusModuleOptions) => new StreamEventBus(store, o),
        inject: [StreamStore, EVENT_BUS_OPTIONS],
      },
      {
        provide: OrderSimulator,
        // It publishes order events; started only when the service carries the order domain.
        useFactory: (store: StreamStore<OrderEvent, OrderSnapshot>, o: EventBusModuleOptions) =>
          new OrderSimulator(store, o.simulatorTracing),
        inject: [StreamStore, EVENT_BUS_OPTIONS],
      },
      EventBusLifecycle,
    ];
    return {
      module: EventBusModule,
      global: true,
      imports: opts.imports ?? [],
      providers,
      exports: [StreamStore, StreamEventBus, OrderSimulator],
    };
  }
}
