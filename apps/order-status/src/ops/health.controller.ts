import { Controller, Get, Inject, Res, ServiceUnavailableException } from '@nestjs/common';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorService,
  type HealthCheckResult,
} from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import {
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { ApiPublic } from '../openapi/api-decorators';
import { HealthCheckResult as HealthCheckResultSchema } from '../openapi/app-schemas';
import { Readiness } from './readiness.service';

/**
 * Kubernetes-style probes (@nestjs/terminus): `/health/live` answers while the event loop
 * does (restart me if not); `/health/ready` is 503 while starting, draining for shutdown
 * or cut off from the store or the shared auth state (send me no traffic). gRPC's standard health service follows
 * the same readiness (see bootstrap).
 */
@Controller('health')
@ApiTags('ops')
export class HealthController {
  constructor(
    @Inject(HealthCheckService) private readonly health: HealthCheckService,
    @Inject(HealthIndicatorService) private readonly indicators: HealthIndicatorService,
    @Inject(Readiness) private readonly readiness: Readiness,
  ) {}

  @Get('live')
  // The service's own schema instead of terminus' generic one (an example database).
  @ApiOkResponse({ type: HealthCheckResultSchema })
  @HealthCheck({ swaggerDocumentation: false })
  @ApiPublic()
  @ApiOperation({
    operationId: 'liveness',
    summary: 'Liveness probe: answers while the event loop does',
  })
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @ApiOkResponse({ type: HealthCheckResultSchema })
  @HealthCheck({ swaggerDocumentation: false })
  @ApiPublic()
  @ApiOperation({
    operationId: 'readiness',
    summary:
      'Readiness probe: 503 while starting, draining or cut off from the store or the shared auth state',
  })
  @ApiServiceUnavailableResponse({
    type: HealthCheckResultSchema,
    description: 'Not ready: see `error`.',
  })
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthCheckResult> {
    const { phase, storeUp, authStateUp } = this.readiness.state();
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
        () => {
          const check = this.indicators.check('authState');
          return authStateUp ? check.up() : check.down();
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
