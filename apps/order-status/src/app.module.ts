import { Module, type DynamicModule } from '@nestjs/common';
import { EventBusModule } from '@app/event-bus';
import { AuthModule } from './auth/auth.module';
import type { AppConfig } from './config/app-config';
import { ConnectionsModule } from './connections/connections.module';
import { ConfigModule } from './config/config.module';
import { OpsModule } from './ops/ops.module';
import { OrdersModule } from './orders/orders.module';
import { GrpcTransportModule } from './transports/grpc/grpc-transport.module';
import { LongPollModule } from './transports/long-poll/long-poll.module';
import { SseModule } from './transports/sse/sse.module';
import { WsModule } from './transports/ws/ws.module';
import type { OrderStore } from '@app/event-bus';

export interface AppModuleOptions {
  readonly config: AppConfig;
  /** Replaces the embedded in-memory store (tests, the Redis store). */
  readonly store?: OrderStore;
}

/** Wires the libs and the transports; nothing here knows how any transport works. */
@Module({})
export class AppModule {
  static register({ config, store }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        EventBusModule.forRootAsync({
          useFactory: () => ({
            ...config.bus,
            store,
            idempotencyWindowMs: config.idempotencyWindowMs,
            idempotencyMaxBytes: config.memory.idempotencyKeysMaxBytes,
          }),
        }),
        AuthModule,
        ConnectionsModule,
        OpsModule.register(config),
        OrdersModule.register({ adminEnabled: config.adminEnabled }),
        SseModule,
        LongPollModule,
        WsModule,
        GrpcTransportModule,
      ],
    };
  }
}
