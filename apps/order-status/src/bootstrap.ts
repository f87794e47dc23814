import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { ValidationPipe, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { StreamEndReason } from '@app/contracts';
import { OrderEventBus, OrderSimulator, type OrderStore } from '@app/event-bus';
import { AppModule } from './app.module';
import type { AppConfig } from './config/app-config';
import { loadTlsMaterial } from './http/dev-certificate';
import { HttpErrorFilter } from './http/http-exception.filter';
import { createHttpServers } from './http/http-servers';
import { createGrpcServer } from './transports/grpc/grpc-server';
import { OrdersIoAdapter } from './transports/ws/orders-io.adapter';

export interface StartOptions {
  /** Replaces the embedded in-memory store (tests, the Redis store). */
  readonly store?: OrderStore;
}

export interface RunningApp {
  readonly app: NestFastifyApplication;
  readonly bus: OrderEventBus;
  /** The ports actually bound (config may ask for 0). */
  readonly ports: { readonly http: number; readonly https: number; readonly grpc: number };
  /** True when HTTPS uses the generated development certificate. */
  readonly devCertificate: boolean;
  readonly tlsCert: string;
  close(): Promise<void>;
}

/** How long open connections get to finish their last writes on close. */
const CLOSE_GRACE_MS = 1_000;

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
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register({ config, store: opts.store }),
    adapter,
    { logger: LOG_LEVELS[config.logLevel] },
  );
  app.useGlobalFilters(new HttpErrorFilter());
  app.useGlobalPipes(
    new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }),
  );
  app.useWebSocketAdapter(new OrdersIoAdapter(app, [http], config));

  const grpc = createGrpcServer(config);
  app.connectMicroservice({ strategy: grpc }, { inheritAppConfig: true });
  await app.startAllMicroservices();

  let httpsPort = -1;
  if (config.httpsPort >= 0) {
    await app.listen(config.httpsPort, config.host);
    httpsPort = (app.getHttpServer().address() as AddressInfo).port;
  } else {
    await app.init();
  }
  const httpPort = await listen(http, config.httpPort, config.host);

  const bus = app.get(OrderEventBus);
  if (config.simulator.enabled) {
    const simulator = app.get(OrderSimulator);
    await simulator.prepare({
      orders: config.simulator.orders,
      ratePerOrder: config.simulator.ratePerOrder,
      paddingBytes: config.simulator.paddingBytes,
      eventsPerStatus: config.simulator.eventsPerStatus,
      lifecycle: true,
    });
    simulator.start();
  }

  let closing: Promise<void> | undefined;
  return {
    app,
    bus,
    ports: { http: httpPort, https: httpsPort, grpc: grpc.boundPort },
    devCertificate: tls.development,
    tlsCert: tls.cert,
    close: () =>
      (closing ??= (async () => {
        // End every stream first (clients are told why), then the connections, then Nest.
        bus.endAll(StreamEndReason.Shutdown);
        const httpClosed = new Promise<void>((resolve) => http.close(() => resolve()));
        await servers.closeConnections(CLOSE_GRACE_MS);
        await app.close();
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
