import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { ValidationPipe, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { StreamEventBus } from '@app/event-bus';
import { type StreamStore } from '@app/store';
import { OrderSimulator } from './simulator/simulator';
import { AppModule } from './app.module';
import type { OrderBus } from './bus/event-bus.module';
import type { AppConfig } from './config/app-config';
import { loadTlsMaterial } from './http/dev-certificate';
import { HttpErrorFilter } from './http/http-exception.filter';
import { createHttpServers } from './http/http-servers';
import { DrainGate } from './connections/drain-gate';
import { registerHttpDrainGate } from './connections/http-drain-gate';
import { applyHttpSecurity } from './http/http-security';
import { servedDomain } from './domains/served-domains';
import { createStreamStore } from './store/create-store';
import { Logger as PinoNestLogger } from 'nestjs-pino';
import { ConnectionLog } from './ops/connection-log';
import { serveDemoPage } from './ops/demo-page';
import { serveApiDocs } from './openapi/docs-page';
import { buildOpenApiDocument } from './openapi/openapi-document';
import { gracefulShutdown } from './ops/graceful-shutdown';
import { ObservedIoAdapter } from './ops/observed-io-adapter';
import { loggerParams } from './ops/logging';
import { Readiness } from './ops/readiness.service';
import { requestContextEnabled } from './ops/request-context';
import { registerRequestLog } from './ops/request-log';
import { GrpcDiscovery } from './transports/grpc/grpc-discovery';
import { BoundServerGrpc, grpcServerOptions } from './transports/grpc/grpc-server';
import { sseDrainAnswer } from './transports/sse/sse-drain-answer';
import { WebSocketUpgrades } from './transports/websocket/websocket-upgrades.service';

export interface StartOptions {
  /** Replaces the embedded in-memory store (tests, the Redis store). */
  readonly store?: StreamStore;
}

export interface RunningApp {
  readonly app: NestFastifyApplication;
  readonly bus: OrderBus;
  /** The ports actually bound (config may ask for 0). */
  readonly ports: { readonly http: number; readonly https: number; readonly grpc: number };
  /** True when HTTPS uses the generated development certificate. */
  readonly devCertificate: boolean;
  readonly tlsCert: string;
  close(): Promise<void>;
}

const LOG_LEVELS: Record<AppConfig['logLevel'], LogLevel[] | false> = {
  debug: ['debug', 'verbose', 'log', 'warn', 'error', 'fatal'],
  info: ['log', 'warn', 'error', 'fatal'],
  warn: ['warn', 'error', 'fatal'],
  error: ['error', 'fatal'],
  silent: false,
};

/**
 * Builds and starts the whole service: one Nest application serving HTTP/1.1 and TLS
 * (h2 + http/1.1) through Fastify, socket.io on both, and gRPC on its own port as a
 * hybrid microservice, all on the same bus.
 */
export async function startApp(config: AppConfig, opts: StartOptions = {}): Promise<RunningApp> {
  const tls = await loadTlsMaterial(config.tls);
  const servers = createHttpServers(config, tls);
  const { adapter, http } = servers;
  // REDIS_URL / REDIS_CLUSTER_NODES select the shared store; closed by the bus module.
  const served = servedDomain(config.benchmark.streamDomain);
  const { domain } = served;
  const store = opts.store ?? (await createStreamStore(config.redis, domain));
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register({ config, store, domain }),
    adapter,
    // Buffered until the pino logger below takes over, so start-up lines are JSON too.
    { logger: LOG_LEVELS[config.logLevel], bufferLogs: true },
  );
  app.useLogger(app.get(PinoNestLogger));
  // First of the onRequest hooks, so requests the others answer are logged too.
  if (config.benchmark.requestLog) {
    registerRequestLog(app.getHttpAdapter().getInstance(), loggerParams(config), {
      context: requestContextEnabled(config.logRequestContext),
    });
  }
  const readiness = app.get(Readiness);
  // Cookies, security headers and CORS, registered before any route is.
  await applyHttpSecurity(app, config);
  app.useGlobalFilters(new HttpErrorFilter());
  if (config.benchmark.validation) {
    app.useGlobalPipes(
      new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }),
    );
  }
  const io = new ObservedIoAdapter(app, [http], config);
  io.useConnectionLog(app.get(ConnectionLog));
  app.useWebSocketAdapter(io);
  // Raw WebSocket upgrades on both listeners, beside socket.io's engine (its own path).
  app
    .get(WebSocketUpgrades)
    .attach([http, app.getHttpServer()], (header) =>
      app.getHttpAdapter().getInstance().parseCookie(header),
    );
  serveDemoPage(app);
  if (config.docs.enabled) serveApiDocs(app, () => buildOpenApiDocument(app, config));
  registerHttpDrainGate(app.getHttpAdapter().getInstance(), app.get(DrainGate), [sseDrainAnswer]);

  // gRPC health follows readiness (not just the server's life): NOT_SERVING while
  // starting, draining or cut off from the store.
  const discovery = new GrpcDiscovery();
  const grpc = new BoundServerGrpc(grpcServerOptions(config, discovery), {
    prefaceTimeoutMs: config.grpc.prefaceTimeoutMs,
  });
  app.connectMicroservice({ strategy: grpc }, { inheritAppConfig: true });
  await app.startAllMicroservices();

  let httpsPort = -1;
  if (config.httpsPort >= 0) {
    await app.listen(config.httpsPort, config.host);
    httpsPort = (app.getHttpServer().address() as AddressInfo).port;
  } else {
    await app.init();
    // Fastify only serves once ready(); listen() does that, so without it we must.
    await app.getHttpAdapter().getInstance().ready();
  }
  const httpPort = await listen(http, config.httpPort, config.host);

  const bus = app.get<StreamEventBus, OrderBus>(StreamEventBus);
  // The simulator moves orders: it has nothing to publish in another domain.
  if (config.simulator.enabled && served.simulated) {
    const simulator = app.get(OrderSimulator);
    await simulator.prepare({
      orders: config.simulator.orders,
      ratePerOrder: config.simulator.ratePerOrder,
      longLivedOrders: config.simulator.longLivedOrders,
      speed: config.simulator.speed,
      lifecycle: true,
    });
    simulator.start();
  }
  readiness.onChange((ready) => (ready ? discovery.markServing() : discovery.markNotServing()));
  readiness.markReady();

  let closing: Promise<void> | undefined;
  return {
    app,
    bus,
    ports: { http: httpPort, https: httpsPort, grpc: grpc.boundPort },
    devCertificate: tls.development,
    tlsCert: tls.cert,
    close: () =>
      (closing ??= (async () => {
        const httpClosed = new Promise<void>((resolve) => http.once('close', () => resolve()));
        await gracefulShutdown({
          readiness,
          bus,
          drainMs: config.shutdown.drainMs,
          reconnectJitterMs: config.shutdown.reconnectJitterMs,
          stopAccepting: () => {
            servers.stopAccepting();
            grpc.drain(config.shutdown.drainMs);
          },
          afterAdvice: () => io.closeAllConnections(),
          closeConnections: (graceMs) => servers.closeConnections(graceMs),
          closeApp: () => app.close(),
        });
        await httpClosed;
      })()),
  };
}

function listen(server: HttpServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
