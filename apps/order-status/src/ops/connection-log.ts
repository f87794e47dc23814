import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';

/** What a connection's closing log line needs; `closed()` is idempotent. */
export interface ConnectionHandle {
  /**
   * `principal`: when the caller was only authenticated after the connection opened (a
   * gRPC handler checks its metadata itself), who it turned out to be.
   */
  closed(reason?: string, principal?: string): void;
}

const ANONYMOUS = 'anonymous';

/** The handle of a connection whose lines are not written at the configured level. */
const UNLOGGED: ConnectionHandle = { closed: () => undefined };

/**
 * The principal a request, socket or call was authenticated as, where the auth layer
 * leaves it: `principal.subject` on the Fastify request, on `socket.data`, or on the
 * gRPC call. `anonymous` when there is none (auth disabled, or not reached yet).
 */
export function principalOf(holder: unknown): string {
  const p = (holder as { principal?: { subject?: unknown } } | null | undefined)?.principal;
  return typeof p?.subject === 'string' ? p.subject : ANONYMOUS;
}

/**
 * One log line when a client connection opens and one when it closes (with its
 * duration), on every transport; never a line per event, which at load would cost more
 * than the delivery itself. A "connection" is what holds resources: an SSE response, a
 * long-poll hold, a socket.io socket, a gRPC Subscribe call.
 */
@Injectable()
export class ConnectionLog {
  private nextId = 1;

  constructor(@Inject(PinoLogger) private readonly logger: PinoLogger) {
    logger.setContext('Connections');
  }

  /**
   * Whether the lines are written at the configured level. Checked before anything is
   * built for them: nestjs-pino copies a line's fields into a new object before pino
   * looks at the level, and a long-poll opens a connection many times a second.
   */
  get enabled(): boolean {
    return this.logger.logger.isLevelEnabled('info');
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
