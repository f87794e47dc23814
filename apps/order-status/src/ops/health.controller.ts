import { Controller, Get, Inject, Res, ServiceUnavailableException } from '@nestjs/common';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorService,
  type HealthCheckResult,
} from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { Readiness } from './readiness.service';

/**
 * Kubernetes-style probes (@nestjs/terminus): `/health/live` answers while the event loop
 * does (restart me if not); `/health/ready` is 503 while starting, draining for shutdown
 * or cut off from the store (send me no traffic). gRPC's standard health service follows
 * the same readiness (see bootstrap).
 */
@Controller('health')
export class HealthController {
  constructor(
    @Inject(HealthCheckService) private readonly health: HealthCheckService,
    @Inject(HealthIndicatorService) private readonly indicators: HealthIndicatorService,
    @Inject(Readiness) private readonly readiness: Readiness,
  ) {}

  @Get('live')
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck()
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthCheckResult> {
    const { phase, storeUp } = this.readiness.state();
    try {
      return await this.health.check([
        () => {
          const check = this.indicators.check('lifecycle');
          return phase === 'ready' ? check.up({ phase }) : check.down({ phase });
        },
        () => {
          const check = this.indicators.check('store');
          return storeUp ? check.up() : check.down();
        },
      ]);
    } catch (err) {
      // Answered here rather than by the global error filter, which would replace
      // terminus' body (what is down, and why) with the generic error shape.
      if (!(err instanceof ServiceUnavailableException)) throw err;
      void reply.status(503);
      return err.getResponse() as HealthCheckResult;
    }
  }
}
