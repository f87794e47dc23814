import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
  type OnModuleInit,
  type Provider,
} from '@nestjs/common';
import type { OrderEvent, OrderSnapshot } from '@app/order-domain';
import type { EventBusOptions } from '@app/event-bus';
import { OrderEventBus } from '@app/event-bus';
import type { StreamDomain } from '@app/contracts';
import { InMemoryOrderStore, OrderStore, StreamStore } from '@app/store';
import { OrderSimulator } from '../simulator/simulator';
import type { OrderTracing } from '../tracing/order-tracing';

export const EVENT_BUS_OPTIONS = Symbol('EVENT_BUS_OPTIONS');

/**
 * The bus as the order module sees it: this service carries the order domain. The
 * transports inject it as `OrderEventBus`, any domain's bus, and name events through
 * its descriptor.
 */
export type OrderBus = OrderEventBus<OrderEvent, OrderSnapshot>;

export interface EventBusModuleOptions extends EventBusOptions {
  /** The store; the embedded in-memory store when omitted. */
  store?: OrderStore;
  /** The embedded store's domain. @default the order domain */
  domain?: StreamDomain<OrderEvent, OrderSnapshot>;
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
    @Inject(OrderEventBus) private readonly bus: OrderEventBus,
    @Inject(OrderSimulator) private readonly simulator: OrderSimulator,
    @Inject(OrderStore) private readonly store: OrderStore,
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
 * under its class as DI token so transports depend on the abstraction only.
 */
@Module({})
export class EventBusModule {
  static forRootAsync(opts: EventBusModuleAsyncOptions): DynamicModule {
    const providers: Provider[] = [
      { provide: EVENT_BUS_OPTIONS, useFactory: opts.useFactory, inject: opts.inject ?? [] },
      {
        provide: OrderStore,
        useFactory: (o: EventBusModuleOptions) =>
          o.store ??
          new InMemoryOrderStore({
            domain: o.domain,
            historySize: o.ringSize,
            historyMaxAgeMs: o.ringMaxAgeMs,
            idempotencyWindowMs: o.idempotencyWindowMs,
            idempotencyMaxBytes: o.idempotencyMaxBytes,
          }),
        inject: [EVENT_BUS_OPTIONS],
      },
      // The same store, as the engine's read side.
      { provide: StreamStore, useExisting: OrderStore },
      {
        provide: OrderEventBus,
        useFactory: (store: OrderStore, o: EventBusModuleOptions) => new OrderEventBus(store, o),
        inject: [OrderStore, EVENT_BUS_OPTIONS],
      },
      {
        provide: OrderSimulator,
        useFactory: (store: OrderStore, o: EventBusModuleOptions) =>
          new OrderSimulator(store, o.simulatorTracing),
        inject: [OrderStore, EVENT_BUS_OPTIONS],
      },
      EventBusLifecycle,
    ];
    return {
      module: EventBusModule,
      global: true,
      imports: opts.imports ?? [],
      providers,
      exports: [OrderStore, StreamStore, OrderEventBus, OrderSimulator],
    };
  }
}
