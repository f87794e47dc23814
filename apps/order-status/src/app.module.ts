import { Module, type DynamicModule } from '@nestjs/common';
import { EventBusModule } from './bus/event-bus.module';
import { AuthModule } from './auth/auth.module';
import type { AppConfig } from './config/app-config';
import { ConnectionsModule } from './connections/connections.module';
import { ConfigModule } from './config/config.module';
import { OpsModule } from './ops/ops.module';
import { GrpcTransportModule } from './transports/grpc/grpc-transport.module';
import { LongPollModule } from './transports/long-poll/long-poll.module';
import { SseModule } from './transports/sse/sse.module';
import { WebSocketModule } from './transports/websocket/websocket.module';
import { WsModule } from './transports/ws/ws.module';
import { OrderTracing } from './tracing/order-tracing';
import { TracingModule } from './tracing/tracing.module';
import type { StreamDomain } from '@app/contracts';
import type { StreamStore } from '@app/store';
import { servedDomain } from './domains/served-domains';

export interface AppModuleOptions {
  readonly config: AppConfig;
  /** Replaces the embedded in-memory store (tests, the Redis store). */
  readonly store?: StreamStore;
  /** The domain the embedded store carries. @default the order domain */
  readonly domain?: StreamDomain;
}

/** Wires the libs and the transports; nothing here knows how any transport works. */
@Module({})
export class AppModule {
  static register({ config, store, domain }: AppModuleOptions): DynamicModule {
    // The domain's publish API (the order routes and calls, the payload route, ...).
    const publishing = servedDomain(config.benchmark.streamDomain).publishing(config);
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        TracingModule,
        EventBusModule.forRootAsync({
          imports: [TracingModule],
          inject: [OrderTracing],
          useFactory: (tracing: OrderTracing) => ({
            ...config.bus,
            store,
            domain,
            idempotencyWindowMs: config.idempotencyWindowMs,
            idempotencyMaxBytes: config.memory.idempotencyKeysMaxBytes,
            deliveryTracer: tracing.delivery,
            simulatorTracing: tracing.enabled ? tracing : undefined,
          }),
        }),
        AuthModule,
        ConnectionsModule,
        OpsModule.register(config),
        ...publishing,
        SseModule,
        LongPollModule,
        WsModule,
        WebSocketModule,
        GrpcTransportModule,
      ],
    };
  }
}
