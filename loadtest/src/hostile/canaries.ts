import { createConnector } from '../clients/connector-factory';
import { RunMetrics, Subscriber } from '../clients/subscriber';
import type { Connector, TransportName } from '../clients/transport';
import { orderId, type AdminClient } from '../service/admin';
import type { RunningService } from '../service/launcher';
import { epochUs, type LatencySummary } from '../stats/latency';
import type { SeqCounts } from '../stats/seq-tracker';

/** The transports a canary watches the service through. */
export const CANARY_TRANSPORTS: readonly TransportName[] = [
  'grpc',
  'sse',
  'sse-h2',
  'ws',
  'websocket',
  'longpoll',
];
export const CANARY_CONNECT_TIMEOUT_MS = 15_000;
export const CANARY_DRAIN_TIMEOUT_MS = 5_000;

export interface CanaryResult {
  readonly transport: TransportName;
  readonly latency: LatencySummary;
  readonly counts: SeqCounts;
  readonly expected: number;
  readonly errors: Record<string, number>;
  readonly ends: Record<string, number>;
  readonly reconnects: number;
}

async function until(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/**
 * One well-behaved subscriber per transport, each following its own busy order
 * (`${prefix}-1..N`, made by the simulator): what every other client of the service would
 * see while the attackers run. Latency counts only events published after `measure()`.
 */
export class CanaryGroup {
  private readonly connectors: Connector[] = [];
  private readonly canaries: { sub: Subscriber; metrics: RunMetrics }[] = [];

  constructor(
    service: RunningService,
    token: string | undefined,
    readonly transports: readonly TransportName[],
    prefix: string,
  ) {
    for (const [i, transport] of transports.entries()) {
      const connector = createConnector(transport, {
        host: service.host,
        httpPort: service.httpPort,
        httpsPort: service.httpsPort,
        grpcPort: service.grpcPort,
        token,
      });
      const metrics = new RunMetrics();
      this.connectors.push(connector);
      this.canaries.push({
        sub: new Subscriber(orderId(prefix, i + 1), 0, connector, metrics),
        metrics,
      });
    }
  }

  /** Connects every canary and waits for each one's replayed `created` event. */
  async connect(): Promise<void> {
    for (const c of this.canaries) c.sub.start();
    const ok = await until(
      () => this.canaries.every((c) => c.sub.tracker.highestSeq >= 1),
      CANARY_CONNECT_TIMEOUT_MS,
    );
    if (!ok) throw new Error('the canaries did not all connect');
  }

  measure(): void {
    const now = epochUs();
    for (const c of this.canaries) c.metrics.measureFromUs = now;
  }

  /** Waits (bounded) for every canary to reach its order's last seq, then counts. */
  async finish(admin: AdminClient): Promise<CanaryResult[]> {
    const last = await admin.lastSeqs(this.canaries.map((c) => c.sub.orderId));
    await until(
      () => this.canaries.every((c) => c.sub.tracker.highestSeq >= (last.get(c.sub.orderId) ?? 0)),
      CANARY_DRAIN_TIMEOUT_MS,
    );
    return this.canaries.map(({ sub, metrics }, i) => {
      const expected = last.get(sub.orderId) ?? sub.tracker.highestSeq;
      return {
        transport: this.transports[i],
        latency: metrics.latency.summary(),
        counts: sub.tracker.counts(expected),
        expected,
        errors: metrics.errors.toJSON(),
        ends: metrics.ends.toJSON(),
        reconnects: sub.reconnects,
      };
    });
  }

  async close(): Promise<void> {
    for (const c of this.canaries) c.sub.stop();
    await Promise.all(this.connectors.map((c) => c.close()));
  }
}
