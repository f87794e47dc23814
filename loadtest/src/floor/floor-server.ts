import { randomBytes } from 'node:crypto';
import { createServer, type RequestListener, type Server } from 'node:http';
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
} from 'node:http2';
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
import { generate } from 'selfsigned';
import {
  adminAnswer,
  holdPoll,
  MAX_WAIT_S,
  metricsText,
  orderBody,
  pollBody,
} from '../bare/bare-api';
import { OrderLog } from '../bare/order-log';

/**
 * The framework's floor for long-poll: the bare server's long-poll (the same OrderLog,
 * the same answers; loadtest/src/bare) served by NestJS on Fastify the way the framework's
 * documentation writes a route, with nothing of the service: a guard that compares the
 * bearer token, `@Param`/`@Query`, a handler that returns a promise of the body, Fastify's
 * own reply (serializer, content-length). No validation pipe, filters, interceptors, CORS,
 * security headers, logging, bus or connection bookkeeping, and nothing tuned. Run beside
 * the bare server and the service by the overhead scenario, it splits long-poll's cost
 * over bare Node into what the framework takes and what the service itself adds.
 *
 * One Fastify instance serves a plain HTTP/1.1 port and a TLS port offering h2 (and
 * http/1.1), as the service's does. It prints the load test's "listening" line with the
 * token its guard accepts.
 */
const log = new OrderLog();
const TOKEN = randomBytes(16).toString('hex');
const BEARER = `Bearer ${TOKEN}`;

/** Deny unless the request carries this process's token. */
class BearerGuard implements CanActivate {
  canActivate(ctx: ExecutionContext): boolean {
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    if (req.headers.authorization !== BEARER) throw new UnauthorizedException();
    return true;
  }
}

@Controller('v1/orders')
@UseGuards(BearerGuard)
class OrdersController {
  @Get(':orderId')
  order(@Param('orderId') orderId: string): object {
    const body = orderBody(log, orderId);
    if (body === undefined) throw new NotFoundException();
    return body;
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
    const afterSeq = Number(after ?? 0);
    return new Promise((resolve) => {
      const cancel = holdPoll(log, orderId, afterSeq, Number(wait ?? MAX_WAIT_S), (events) => {
        if (events !== undefined) return resolve(pollBody(orderId, afterSeq, events));
        void reply.status(204);
        resolve(undefined);
      });
      // The client left while the poll was held: stop waiting for it.
      reply.raw.once('close', cancel);
    });
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

@Module({ controllers: [OrdersController, SimulatorController, MetricsController] })
class FloorModule {}

async function main(): Promise<void> {
  const host = process.env.HOST ?? '127.0.0.1';
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048 });
  let plain: Server | undefined;
  const adapter = new FastifyAdapter<Http2SecureServer>({
    http2: true,
    https: { allowHTTP1: true, key: pems.private, cert: pems.cert },
    // Both servers run Fastify's handler, as the service's do (apps/.../http-servers.ts).
    serverFactory: (handler: (req: Http2ServerRequest, res: Http2ServerResponse) => void) => {
      plain = createServer({ keepAliveTimeout: 60_000 }, handler as unknown as RequestListener);
      // TCP_NODELAY as the service sets it (Node's HTTP/2 secure server does not by default).
      return createSecureServer(
        { key: pems.private, cert: pems.cert, allowHTTP1: true, noDelay: true },
        handler,
      );
    },
  });
  const app = await NestFactory.create<NestFastifyApplication>(FloorModule, adapter, {
    logger: false,
  });
  await app.listen(Number(process.env.HTTPS_PORT ?? 0), host);
  const https = (app.getHttpServer().address() as AddressInfo).port;
  const http1 = plain;
  if (http1 === undefined) throw new Error('Fastify did not call serverFactory');
  const http = await new Promise<number>((resolve) =>
    http1.listen(Number(process.env.HTTP_PORT ?? 0), host, () =>
      resolve((http1.address() as AddressInfo).port),
    ),
  );
  process.stdout.write(
    `${JSON.stringify({ event: 'listening', http, https, grpc: 0, pid: process.pid, token: TOKEN })}\n`,
  );
  const shutdown = (): void => {
    log.stop();
    http1.close();
    void app.close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

void main();
