import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config';
import { ConnectionObserver } from '../connections/connection-observer';
import { DrainGate } from '../connections/drain-gate';
import { ConnectionLog } from './connection-log';
import { HealthController } from './health.controller';
import { loggerParams } from './logging';
import { MetricsService } from './metrics.service';
import { OpsConnectionObserver } from './ops-connection-observer';
import { OpsController } from './ops.controller';
import { Readiness } from './readiness.service';

/** Metrics, health probes, structured logs and the pieces graceful shutdown drives. */
@Module({})
export class OpsModule {
  static register(config: AppConfig): DynamicModule {
    return {
      module: OpsModule,
      // Global: the auth layer counts failures in MetricsService from any module.
      global: true,
      // Terminus' own logger would print a stack for every 503 while draining; readiness
      // changes are logged once each by Readiness instead.
      imports: [
        LoggerModule.forRoot(loggerParams(config)),
        TerminusModule.forRoot({ logger: false }),
      ],
      controllers: [OpsController, HealthController],
      // The connection layer reports through ConnectionObserver (its guard on the held
      // HTTP routes, gRPC's Subscribe, socket.io's memory); socket.io's lines come from
      // ObservedIoAdapter with ConnectionLog.
      providers: [
        MetricsService,
        Readiness,
        ConnectionLog,
        {
          provide: ConnectionObserver,
          useFactory: (log: ConnectionLog, metrics: MetricsService) =>
            new OpsConnectionObserver(log, metrics.trackMemory),
          inject: [ConnectionLog, MetricsService],
        },
        {
          provide: DrainGate,
          useFactory: (readiness: Readiness) =>
            new DrainGate(
              () => readiness.state().phase === 'draining',
              config.shutdown.reconnectJitterMs,
            ),
          inject: [Readiness],
        },
      ],
      exports: [MetricsService, Readiness, ConnectionLog, ConnectionObserver, DrainGate],
    };
  }
}
