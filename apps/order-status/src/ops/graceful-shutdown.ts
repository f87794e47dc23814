import { Logger } from '@nestjs/common';
import { StreamEndReason } from '@app/contracts';
import type { StreamEventBus } from '@app/event-bus';
import type { Readiness } from './readiness.service';

/**
 * @default 1_000 ms open connections get to flush their last writes (and their peers to
 * answer GOAWAY or a close frame) before they are destroyed; taken from the end of the
 * drain window, and at most half of it.
 */
export const CLOSE_GRACE_MS = 1_000;
/**
 * @default 5_000 ms after the drain deadline for closing connections, Nest and the store,
 * before the process exits on its own; an orchestrator's grace period must cover both.
 */
export const SHUTDOWN_EXIT_MARGIN_MS = 5_000;
/** How often the drain looks at the open-connection count (a bounded condition wait). */
const DRAIN_POLL_MS = 20;

/** What the shutdown sequence drives; bootstrap supplies each step. */
export interface ShutdownSteps {
  readonly readiness: Readiness;
  readonly bus: StreamEventBus;
  readonly drainMs: number;
  readonly reconnectJitterMs: number;
  /**
   * Sends GOAWAY (HTTP/2, gRPC); must not wait. The HTTP listeners stay open until
   * `closeConnections`, so probes see `/health/ready` 503 during the drain.
   */
  stopAccepting(): void;
  /** Runs right after every stream was told to reconnect (closes socket.io engines). */
  afterAdvice(): void;
  /**
   * Destroys every connection still open after `graceMs`, whatever its peer does;
   * resolves with how many it destroyed.
   */
  closeConnections(graceMs: number): Promise<number>;
  /** Closes Nest: module shutdown hooks, gRPC, socket.io, then the store (Redis). */
  closeApp(): Promise<void>;
}

/**
 * Graceful shutdown:
 * 1. readiness flips: `/health/ready` answers 503 and gRPC health NOT_SERVING, so load
 *    balancers stop routing here;
 * 2. no new streams: HTTP/2 and gRPC sessions get GOAWAY, and HTTP requests (on new or
 *    kept-alive connections: the HTTP listeners stay open until step 5, so probes still
 *    get their 503) are turned away with reconnect advice (the connection layer's `DrainGate`);
 * 3. every open stream is told to reconnect, each with its own random delay so the
 *    clients of this instance do not come back in one burst: SSE `retry:` then
 *    `event: end`, socket.io `end {retryAfterMs}` then the connection closes, gRPC
 *    UNAVAILABLE, long-poll answered at once with `Retry-After`;
 * 4. wait for the clients to leave;
 * 5. close the listeners and give what remains a short grace, then destroy it: a peer
 *    that stopped reading never takes its advice, GOAWAY or close frame, so only its
 *    socket's destroy ends it. Steps 4 and 5 fit in `drainMs`. Then close Nest (and with
 *    it the store's connection).
 */
export async function gracefulShutdown(steps: ShutdownSteps): Promise<void> {
  const logger = new Logger('Shutdown');
  const startedAt = performance.now();
  steps.readiness.beginDrain();
  steps.stopAccepting();
  const streams = steps.bus.subscriberCount();
  steps.bus.endAll(StreamEndReason.Shutdown, { reconnectJitterMs: steps.reconnectJitterMs });
  steps.afterAdvice();
  const graceMs = Math.min(CLOSE_GRACE_MS, Math.floor(steps.drainMs / 2));
  const deadline = startedAt + steps.drainMs - graceMs;
  while (openConnections(steps.bus) > 0 && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, DRAIN_POLL_MS));
  }
  const left = openConnections(steps.bus);
  logger.log(
    `drained in ${Math.round(performance.now() - startedAt)} ms: ${streams} streams advised to reconnect, ${left} connections left`,
  );
  const destroyed = await steps.closeConnections(graceMs);
  if (destroyed > 0) {
    logger.warn(`${destroyed} connections still open after a ${graceMs} ms grace: destroyed`);
  }
  await steps.closeApp();
}

function openConnections(bus: StreamEventBus): number {
  let n = 0;
  for (const count of bus.stats.connectionsByTransport.values()) n += count;
  return n;
}
