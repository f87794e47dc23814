import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { OrderTracing } from './order-tracing';

/**
 * @default 2_000 ms to export the spans still batched at shutdown; well inside
 * SHUTDOWN_EXIT_MARGIN_MS, which also covers closing Nest and the store.
 */
export const TRACE_FLUSH_TIMEOUT_MS = 2_000;

/** Exports the last spans when the application shuts down, within a bounded wait. */
@Injectable()
class TracingLifecycle implements OnApplicationShutdown {
  constructor(@Inject(OrderTracing) private readonly tracing: OrderTracing) {}

  onApplicationShutdown(): Promise<void> {
    return this.tracing.shutdown(TRACE_FLUSH_TIMEOUT_MS);
  }
}

/** OpenTelemetry tracing (OTEL_* variables; off unless configured), for the whole app. */
@Global()
@Module({
  providers: [
    {
      provide: OrderTracing,
      useFactory: (config: AppConfig) =>
        OrderTracing.fromConfig(config.tracing, storeKindOf(config)),
      inject: [APP_CONFIG],
    },
    TracingLifecycle,
  ],
  exports: [OrderTracing],
})
export class TracingModule {}

/** The `store` span's `order_status.store`. */
function storeKindOf(config: AppConfig): string {
  if (config.redis === undefined) return 'memory';
  return config.redis.clusterNodes.length > 0 ? 'redis-cluster' : 'redis';
}
