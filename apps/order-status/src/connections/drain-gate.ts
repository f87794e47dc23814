import { ErrorCode, GatewayError } from '@app/contracts';
import { reconnectAdviceMs } from '@app/event-bus';

/**
 * Whether new connections are turned away because the instance drains for shutdown, and
 * the reconnect advice each one gets. The one drain check of the connection layer: every
 * connection's life cycle passes it before its stream opens (StreamConnections), the
 * HTTP routes before a handler runs (http-drain-gate.ts: SSE gets its `retry:` stream),
 * the raw WebSocket upgrade before its life cycle starts (close 1012). Ops provides it
 * from readiness; transports depend on this class, never on ops.
 */
export class DrainGate {
  /**
   * @param isDraining true from the start of the drain on (readiness' phase).
   * @param reconnectJitterMs advice is spread over this many ms, like `bus.endAll`'s.
   */
  constructor(
    private readonly isDraining: () => boolean,
    private readonly reconnectJitterMs: number,
  ) {}

  get draining(): boolean {
    return this.isDraining();
  }

  /** The reconnect delay for one client turned away, spread like `bus.endAll`'s. */
  adviseMs(): number {
    return reconnectAdviceMs(this.reconnectJitterMs);
  }

  /**
   * Throws the typed refusal while draining: `unavailable` with reconnect advice, which
   * each transport answers in its own terms (gRPC UNAVAILABLE with `retry-after-ms`,
   * socket.io's `connect_error` data).
   */
  assertOpen(): void {
    if (this.draining) throw this.refusal();
  }

  /** The typed refusal of a connection turned away during the drain. */
  refusal(retryAfterMs = this.adviseMs()): GatewayError {
    return new GatewayError(ErrorCode.Unavailable, 'the service is shutting down', retryAfterMs);
  }
}
