import type { Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import {
  Body,
  Controller,
  Get,
  Header,
  HttpCode,
  Module,
  NotFoundException,
  Param,
  Post,
  Put,
  Query,
  Res,
  UnauthorizedException,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { adminAnswer, metricsText, orderBody } from '../bare-server/bare-api';
import { OrderLog } from '../bare-server/order-log';
import { announceFloor, FLOOR_BEARER, floorListen, floorServers } from './floor-http';
import { floorPoll } from './floor-poll';

/**
 * The framework's floor for long-poll: the bare server's long-poll (the same OrderLog,
 * the same answers; loadtest/src/bare) served by NestJS on Fastify the way the framework's
 * documentation writes a route, with nothing of the service: a guard that compares the
 * bearer token, `@Param`/`@Query`, a handler that returns a promise of the body, Fastify's
 * own reply (serializer, content-length). No validation pipe, filters, interceptors, CORS,
 * security headers, logging, bus or connection bookkeeping, and nothing tuned. Run beside
 * the bare server, the Fastify floor (fastify-floor-server.ts) and the service by the
 * overhead scenario, it splits long-poll's cost over bare Node into what Fastify takes,
 * what Nest adds to it, and what the service itself adds.
 *
 * One Fastify instance serves a plain HTTP/1.1 port and a TLS port offering h2 (and
 * http/1.1), as the service's does (floor-http.ts). It prints the load test's "listening"
 * line with the token its guard accepts.
 */
const log = new OrderLog();

/** Deny unless the request carries this process's token. */
class BearerGuard implements CanActivate {
  canActivate(ctx: ExecutionContext): boolean {
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    if (req.headers.authorization !== FLOOR_BEARER) throw new UnauthorizedException();
    return true;
  }
}

/** The stream's state, at both domains' routes (`v1/orders`, and `v1/streams` for payloads). */
function snapshotOf(orderId: string): object {
  const body = orderBody(log, orderId);
  if (body === undefined) throw new NotFoundException();
  return body;
}

@Controller('v1/streams')
@UseGuards(BearerGuard)
class StreamsController {
  @Get(':orderId')
  stream(@Param('orderId') orderId: string): object {
    return snapshotOf(orderId);
  }
}

@Controller('v1/orders')
@UseGuards(BearerGuard)
class OrdersController {
  @Get(':orderId')
  order(@Param('orderId') orderId: string): object {
    return snapshotOf(orderId);
  }

  /** 200 with what follows `after` once there is any; 204 when `wait` passes with nothing. */
  @Get(':orderId/events')
  poll(
    @Param('orderId') orderId: string,
    @Query('after') after: string | undefined,
    @Query('wait') wait: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<object | undefined> {
    if (log.get(orderId) === undefined) throw new NotFoundException();
    return floorPoll(log, reply, orderId, after, wait);
  }
}

@Controller('v1/admin/simulator')
@UseGuards(BearerGuard)
class SimulatorController {
  @Get()
  status(): object | undefined {
    return adminAnswer(log, 'GET', '/v1/admin/simulator', {});
  }

  @Put()
  prepare(@Body() body: Record<string, unknown> | undefined): object | undefined {
    return adminAnswer(log, 'PUT', '/v1/admin/simulator', body ?? {});
  }

  @Post(':action')
  @HttpCode(200)
  act(@Param('action') action: string): object | undefined {
    const answer = adminAnswer(log, 'POST', `/v1/admin/simulator/${action}`, {});
    if (answer === undefined) throw new NotFoundException();
    return answer;
  }
}

@Controller('metrics')
class MetricsController {
  @Get()
  @Header('content-type', 'text/plain')
  metrics(): string {
    return metricsText();
  }
}

@Module({
  controllers: [OrdersController, StreamsController, SimulatorController, MetricsController],
})
class FloorModule {}

async function main(): Promise<void> {
  const servers = await floorServers();
  const adapter = new FastifyAdapter<Http2SecureServer>({
    http2: true,
    https: servers.https,
    serverFactory: servers.serverFactory,
  });
  const app = await NestFactory.create<NestFastifyApplication>(FloorModule, adapter, {
    logger: false,
  });
  const { host, port } = floorListen();
  await app.listen(port, host);
  const https = (app.getHttpServer().address() as AddressInfo).port;
  await announceFloor(servers, https, async () => {
    log.stop();
    await app.close();
  });
}

void main();
