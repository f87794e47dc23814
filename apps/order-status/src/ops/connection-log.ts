import { Inject, Injectable, Optional } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ANONYMOUS, type ConnectionHandle } from '../connections/connection-observer';

/** The handle of a connection whose lines are not written at the configured level. */
const UNLOGGED: ConnectionHandle = { closed: () => undefined };

/**
 * One log line when a client connection opens and one when it closes (with its
 * duration), on every transport; never a line per event, which at load would cost more
 * than the delivery itself. A "connection" is what holds resources: an SSE response, a
 * long-poll hold, a socket.io socket, a gRPC Subscribe call.
 */
@Injectable()
export class ConnectionLog {
  private nextId = 1;

  /** False with `BENCHMARK_LAYERS_OFF=request-log`: the load test's ladder prices these lines. */
  private readonly on: boolean;

  constructor(
    @Inject(PinoLogger) private readonly logger: PinoLogger,
    @Optional() @Inject(APP_CONFIG) config?: AppConfig,
  ) {
    logger.setContext('Connections');
    this.on = config?.benchmark.requestLog ?? true;
  }

  /**
   * Whether the lines are written at the configured level. Checked before anything is
   * built for them: nestjs-pino copies a line's fields into a new object before pino
   * looks at the level, and a long-poll opens a connection many times a second.
   */
  get enabled(): boolean {
    return this.on && this.logger.logger.isLevelEnabled('info');
  }

  opened(
    transport: string,
    principal: string,
    attrs: Record<string, unknown> = {},
  ): ConnectionHandle {
    if (!this.enabled) return UNLOGGED;
    const conn = this.nextId++;
    this.logger.info({ conn, transport, principal, ...attrs }, 'connection opened');
    return new LoggedConnection(this.logger, conn, transport, principal);
  }
}

/**
 * An open connection's closing line: an object rather than a closure, since every held
 * connection keeps its handle for its whole life.
 */
class LoggedConnection implements ConnectionHandle {
  private readonly startedAt = performance.now();
  private done = false;

  constructor(
    private readonly logger: PinoLogger,
    private readonly conn: number,
    private readonly transport: string,
    private readonly principal: string,
  ) {}

  closed(reason?: string, latePrincipal?: string): void {
    if (this.done) return;
    this.done = true;
    const durationMs = Math.round(performance.now() - this.startedAt);
    const who =
      latePrincipal !== undefined && latePrincipal !== ANONYMOUS ? latePrincipal : this.principal;
    this.logger.info(
      {
        conn: this.conn,
        transport: this.transport,
        principal: who,
        durationMs,
        ...(reason ? { reason } : {}),
      },
      'connection closed',
    );
  }
}
