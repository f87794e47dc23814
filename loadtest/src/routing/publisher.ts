import { Cluster, Redis } from 'ioredis';
import type { PayloadEvent } from '@app/payload-domain';
import { channelOf, orderIdOf, type Routing } from './channels';

const TICK_MS = 10;
/** A prime coprime with any order count we use: consecutive events visit every order. */
const ORDER_STRIDE = 7_919;
/**
 * The payload of every event: about the store's event size (117 bytes of JSON), and as
 * large as the padded order event this scenario's figures were first measured with.
 */
export const ROUTING_PAYLOAD = 'x'.repeat(45);

/** One event as the store publishes it: the load test's own (the payload domain). */
export function routingEvent(orderId: string, seq: number, publishedAtUs: number): PayloadEvent {
  return { orderId, seq, publishedAtUs, payload: ROUTING_PAYLOAD };
}

/**
 * Publishes events of `orders` orders at `ratePerSec` in total straight to pub/sub
 * (PUBLISH, or SPUBLISH on Cluster as the store's script does), on the channel `routing`
 * picks. Only the pub/sub half of a publish: the store's script also writes the order's
 * snapshot and history, which is the same under either routing and is not measured here.
 * Auto-pipelined, so the generator keeps up on a busy host.
 */
export class RoutingPublisher {
  private readonly client: Redis | Cluster;
  private timer?: NodeJS.Timeout;
  private sent = 0;
  private failed = 0;
  private startedAt = 0;
  private seq = 0;
  private routing: Routing = { mode: 'order', shards: 0 };

  constructor(target: { redisUrl?: string; clusterPorts?: readonly number[] }) {
    const options = { enableAutoPipelining: true, maxRetriesPerRequest: 1 };
    this.client =
      target.clusterPorts !== undefined
        ? new Cluster(
            target.clusterPorts.map((port) => ({ host: '127.0.0.1', port })),
            { enableAutoPipelining: true, redisOptions: { maxRetriesPerRequest: 1 } },
          )
        : new Redis(target.redisUrl as string, options);
    this.client.on('error', () => undefined);
  }

  get sharded(): boolean {
    return this.client instanceof Cluster;
  }

  /** Publishes sent so far (counted when written, not when answered). */
  get published(): number {
    return this.sent;
  }

  get failures(): number {
    return this.failed;
  }

  start(routing: Routing, orders: number, ratePerSec: number): void {
    this.routing = routing;
    this.startedAt = performance.now();
    const base = this.sent;
    this.timer = setInterval(() => {
      const due = Math.floor(((performance.now() - this.startedAt) / 1_000) * ratePerSec);
      // Bounded per tick: a stalled generator catches up over a few ticks, not in one burst.
      const n = Math.min(due - (this.sent - base), Math.ceil((ratePerSec * TICK_MS) / 100));
      for (let i = 0; i < n; i++) this.publishOne(orders);
    }, TICK_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async close(): Promise<void> {
    this.stop();
    this.client.disconnect();
  }

  private publishOne(orders: number): void {
    const orderId = orderIdOf((this.seq * ORDER_STRIDE) % orders);
    this.seq++;
    this.sent++;
    const event = JSON.stringify(routingEvent(orderId, this.seq, Date.now() * 1_000));
    const channel = channelOf(this.routing, orderId);
    const done =
      this.client instanceof Cluster
        ? this.client.spublish(channel, event)
        : this.client.publish(channel, event);
    done.catch(() => this.failed++);
  }
}
