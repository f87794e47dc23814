import WebSocket from 'ws';
import { ORDER_PREFIX } from '../service/admin';
import { SteadyPacer } from '../bare-server/steady-pacer';
import type {
  ServiceControl,
  SimulatorSchedule,
  SimulatorStatus,
} from '../service/service-control';

/** Statuses the bare server's simulator cycles through (the same bytes per event). */
const STATUSES = ['paid', 'packed', 'shipped', 'out_for_delivery'] as const;
/** Publisher connections opened at once while preparing. */
export const PUBLISHER_CONNECT_BATCH = 100;
export const PUBLISHER_TIMEOUT_MS = 15_000;

interface Channel {
  readonly id: string;
  readonly ws: WebSocket;
  lastSeq: number;
  acked: number;
}

function nowUs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

/**
 * The load test's own publisher for Nchan, which has no simulator: one WebSocket per
 * channel to Nchan's publisher location (each text message is one publish), paced as
 * the service's simulator is (steady-pacer.ts) and publishing the same JSON. It runs in
 * a process of its own on the generator's core (publisher-ipc.ts says why), not in the
 * generator's process.
 * Nchan's CPU includes receiving every publish (a WebSocket frame), which the service and
 * the bare server, publishing in process, do not pay: at one order the cost is 10 frames a
 * second, at one order per subscriber it is one frame per delivery.
 */
export class NchanPublisher implements ServiceControl {
  private channels: Channel[] = [];
  private readonly byId = new Map<string, Channel>();
  private pacer?: SteadyPacer;
  private state = 'idle';
  private published = 0;
  private schedule = { ratePerOrder: 0, payloads: false, filler: '' };

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  /** An order status change, or in the payload domain a payload (the service's fields). */
  private publish(c: Channel, status: string): void {
    c.lastSeq += 1;
    this.published += 1;
    const { payloads, filler } = this.schedule;
    const [orderId, seq, publishedAtUs] = [c.id, c.lastSeq, nowUs()];
    c.ws.send(
      JSON.stringify(
        payloads
          ? { orderId, seq, publishedAtUs, payload: filler }
          : { orderId, seq, status, publishedAtUs },
      ),
    );
  }

  private open(id: string): Promise<Channel> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://${this.host}:${this.port}/pub/${encodeURIComponent(id)}`);
      const c: Channel = { id, ws, lastSeq: 0, acked: 0 };
      // Nchan answers every publish with the channel's status: counted, not parsed.
      ws.on('message', () => (c.acked += 1));
      ws.once('open', () => resolve(c));
      ws.once('error', reject);
    });
  }

  async prepare(s: SimulatorSchedule): Promise<SimulatorStatus> {
    await this.close();
    this.schedule = {
      ratePerOrder: s.ratePerOrder,
      payloads: s.domain === 'payload',
      // Only payload events carry filler: the order contract has none.
      filler: s.domain === 'payload' ? 'x'.repeat(s.payloadBytes ?? 0) : '',
    };
    const prefix = s.prefix ?? ORDER_PREFIX;
    const ids = Array.from({ length: s.orders }, (_, i) => `${prefix}-${i + 1}`);
    for (let i = 0; i < ids.length; i += PUBLISHER_CONNECT_BATCH) {
      const batch = await Promise.all(
        ids.slice(i, i + PUBLISHER_CONNECT_BATCH).map((id) => this.open(id)),
      );
      this.channels.push(...batch);
    }
    for (const c of this.channels) {
      this.byId.set(c.id, c);
      this.publish(c, 'created');
    }
    // Every `created` stored before a subscriber asks for the oldest message.
    const until = performance.now() + PUBLISHER_TIMEOUT_MS;
    while (this.channels.some((c) => c.acked < 1)) {
      if (performance.now() > until) throw new Error('Nchan did not confirm every created event');
      await new Promise((r) => setTimeout(r, 20));
    }
    this.state = 'ready';
    return this.status();
  }

  async start(): Promise<SimulatorStatus> {
    if (this.state !== 'ready') return this.status();
    this.state = 'running';
    const channels = this.channels;
    this.pacer = new SteadyPacer(channels.length, this.schedule.ratePerOrder, (order, step) =>
      this.publish(channels[order], STATUSES[step % STATUSES.length]),
    );
    this.pacer.start();
    return this.status();
  }

  async stop(): Promise<SimulatorStatus> {
    this.pacer?.stop();
    this.pacer = undefined;
    if (this.state === 'running') this.state = 'stopped';
    return this.status();
  }

  async status(): Promise<SimulatorStatus> {
    return { state: this.state, published: this.published, failed: 0 };
  }

  async lastSeq(orderId: string): Promise<number> {
    return this.byId.get(orderId)?.lastSeq ?? 0;
  }

  async lastSeqs(orderIds: readonly string[]): Promise<Map<string, number>> {
    return new Map(orderIds.map((id) => [id, this.byId.get(id)?.lastSeq ?? 0]));
  }

  /** Nchan has no Prometheus endpoint. */
  async metrics(): Promise<undefined> {
    return undefined;
  }

  async close(): Promise<void> {
    await this.stop();
    for (const c of this.channels) c.ws.terminate();
    this.channels = [];
    this.byId.clear();
  }
}
