import { parsePromText, type PromSample } from '../sampling/prom-text';
import type { ServiceEndpoints } from './launcher';
import type { ServiceControl, SimulatorSchedule, SimulatorStatus } from './service-control';

export type { ServiceControl, SimulatorSchedule, SimulatorStatus } from './service-control';

export const ORDER_PREFIX = 'lt';
export const ADMIN_TIMEOUT_MS = 15_000;

/** Talks to the service's admin API and metrics (control traffic never goes through the proxy). */
export class AdminClient implements ServiceControl {
  private readonly base: string;
  /** Where a stream's snapshot is read: the domain of the last schedule. */
  private snapshotRoute = '/v1/orders';

  constructor(
    svc: ServiceEndpoints,
    private readonly token?: string,
  ) {
    this.base = `http://${svc.host.includes(':') ? `[${svc.host}]` : svc.host}:${svc.httpPort}`;
  }

  private async call(
    method: string,
    path: string,
    body?: unknown,
    timeoutMs = ADMIN_TIMEOUT_MS,
  ): Promise<string> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} -> ${res.status}: ${text.slice(0, 300)}`);
    return text;
  }

  /**
   * Creates `${prefix}-1..N` (each already at seq 1, `created`) and waits for start().
   * `timeoutMs`: creating 100,000 orders through a shared store takes longer than a call.
   */
  async prepare(s: SimulatorSchedule, timeoutMs = ADMIN_TIMEOUT_MS): Promise<SimulatorStatus> {
    const { domain = 'order', payloadBytes = 0, ...schedule } = s;
    if (domain === 'order' && payloadBytes > 0) {
      // Event sizes are the payload domain's: the order contract has no filler.
      throw new TypeError(`a payload of ${payloadBytes} bytes needs the payload domain`);
    }
    // The payload domain's schedule is steady only; the order domain's sends tracking updates.
    const body =
      domain === 'payload'
        ? { prefix: ORDER_PREFIX, ...schedule, payloadBytes, autoStart: false }
        : { prefix: ORDER_PREFIX, ...schedule, lifecycle: false, autoStart: false };
    this.snapshotRoute = domain === 'payload' ? '/v1/streams' : '/v1/orders';
    const text = await this.call('PUT', '/v1/admin/simulator', body, timeoutMs);
    return JSON.parse(text) as SimulatorStatus;
  }

  async start(): Promise<SimulatorStatus> {
    return JSON.parse(await this.call('POST', '/v1/admin/simulator/start')) as SimulatorStatus;
  }

  async stop(): Promise<SimulatorStatus> {
    return JSON.parse(await this.call('POST', '/v1/admin/simulator/stop')) as SimulatorStatus;
  }

  async status(): Promise<SimulatorStatus> {
    return JSON.parse(await this.call('GET', '/v1/admin/simulator')) as SimulatorStatus;
  }

  async lastSeq(orderId: string): Promise<number> {
    const snap = JSON.parse(
      await this.call('GET', `${this.snapshotRoute}/${encodeURIComponent(orderId)}`),
    ) as {
      lastSeq: number;
    };
    return snap.lastSeq;
  }

  /** Last seq of many orders, a bounded number of requests at a time. */
  async lastSeqs(orderIds: readonly string[], concurrency = 32): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < orderIds.length) {
        const id = orderIds[next++];
        out.set(id, await this.lastSeq(id));
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, orderIds.length) }, worker));
    return out;
  }

  /** Undefined when the service has no /metrics (a bare server). */
  async metrics(): Promise<PromSample[] | undefined> {
    try {
      return parsePromText(await this.call('GET', '/metrics'));
    } catch {
      return undefined;
    }
  }
}

export function orderId(prefix: string, i: number): string {
  return `${prefix}-${i}`;
}
