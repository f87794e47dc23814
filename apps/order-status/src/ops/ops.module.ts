import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config';
import { ConnectionLog } from './connection-log';
import { HealthController } from './health.controller';
import { loggerParams } from './logging';
import { MetricsService } from './metrics.service';
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
      // ConnectionLogGuard is bound on the routes it logs; Nest instantiates it there, with
      // ConnectionLog from here (gRPC's Subscribe and socket.io log their own lines).
      providers: [MetricsService, Readiness, ConnectionLog],
      exports: [MetricsService, Readiness, ConnectionLog],
    };
  }
}
