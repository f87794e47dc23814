import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadConfig } from './config/app-config';
import { ConfigError } from './config/env-schema';
import { startApp } from './bootstrap';
import { demoBanner } from './auth/demo-banner';
import { SHUTDOWN_EXIT_MARGIN_MS } from './ops/graceful-shutdown';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const running = await startApp(config);
  const logger = new Logger('OrderStatus');
  // Before the listening line: from the moment a script or an orchestrator sees it, a
  // SIGTERM must drain, not kill (the banner below awaits, and a signal that came during
  // that await used to take the signal's default action).
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal} received, draining (at most ${config.shutdown.drainMs} ms)`);
    // The drain is bounded, but closing Nest and the store is not: an orchestrator kills
    // at its own deadline anyway, better to exit on ours with a clear line.
    setTimeout(() => {
      logger.error('shutdown did not finish in time, exiting');
      process.exit(1);
    }, config.shutdown.drainMs + SHUTDOWN_EXIT_MARGIN_MS).unref();
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const { http, https, grpc } = running.ports;
  // One machine-readable line for scripts (the load test reads the ports from it).
  process.stdout.write(
    `${JSON.stringify({ event: 'listening', http, https, grpc, pid: process.pid })}\n`,
  );
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  // The banner is for the person who ran `npm start`: plain text on stderr, while the
  // logs stay JSON lines on stdout (pipe them through `npx pino-pretty` to read them).
  const banner = [
    '',
    `  HTTP/1.1        http://${host}:${http}   (demo page: http://${host}:${http}/)`,
    ...(https >= 0
      ? [
          `  HTTPS (h2, h1)  https://${host}:${https}${running.devCertificate ? '  (development certificate)' : ''}`,
        ]
      : []),
    `  gRPC            ${host}:${grpc}`,
    ...(config.simulator.enabled
      ? [
          `  Simulator       ${config.simulator.orders} orders, ${config.simulator.ratePerOrder} events/s each`,
        ]
      : []),
    // Demo mode: a ready token and commands that work as pasted (every route needs one).
    ...(await demoBanner(config, `http://${host}:${http}`, `${host}:${grpc}`)),
    '',
  ];
  process.stderr.write(`${banner.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(
    `failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
