import { Cluster, Redis } from 'ioredis';
import { channelOf, orderIdOf } from './channels';
import {
  INSTANCE_CONFIG_ENV,
  type InstanceCommand,
  type InstanceConfig,
  type InstanceMessage,
} from './instance-protocol';

/** Channels per SUBSCRIBE when following the initial orders (as the store batches). */
const SUBSCRIBE_BATCH = 1_000;
/** Churn is applied in steps this far apart. */
const CHURN_TICK_MS = 100;

/**
 * One service instance as pub/sub sees it, in a process of its own so its CPU is its own:
 * a subscriber connection that follows `follow` of `orders` orders, replaces
 * `churnPerSec` of them per second, and for every message does what the store does (parse
 * the event) and what the bus does (look the order up among the followed ones). Per-order
 * routing subscribes exactly the followed orders; shard routing keeps a reference count per
 * shard channel and subscribes a shard while any followed order hashes to it.
 *
 * No linger: the service keeps an order's channel 30 s after its last subscriber left,
 * which lowers per-order churn in practice; here every departure unsubscribes at once (the
 * worst case for per-order channels).
 */
class SimulatedInstance {
  private readonly sub: Redis | Cluster;
  private readonly followed = new Set<string>();
  private readonly followedList: string[] = [];
  private readonly refs = new Map<string, number>();
  private ingested = 0;
  private needed = 0;
  private subscribes = 0;
  private unsubscribes = 0;
  private commandErrors = 0;
  private cpuStart = process.cpuUsage();
  private churnTimer?: NodeJS.Timeout;
  private churnCarry = 0;

  constructor(private readonly config: InstanceConfig) {
    const options = { maxRetriesPerRequest: 1, commandTimeout: 10_000 };
    this.sub =
      config.clusterNodes !== undefined
        ? new Cluster(
            config.clusterNodes.map((n) => {
              const [host, port] = n.split(':');
              return { host, port: Number(port) };
            }),
            { shardedSubscribers: true, redisOptions: options },
          )
        : new Redis(config.redisUrl as string, options);
    const onMessage = (_channel: string, message: string): void => this.onMessage(message);
    this.sub.on('message', onMessage);
    this.sub.on('smessage', onMessage);
    this.sub.on('error', () => undefined);
  }

  get sharded(): boolean {
    return this.config.clusterNodes !== undefined;
  }

  async connected(): Promise<void> {
    if (this.sub.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('redis not ready in 20 s')), 20_000);
      this.sub.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    // Sharded subscribers open their per-master connections after the cluster is ready.
    if (this.sharded) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5_000);
        this.sub.once('subscribersReady', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Follows the initial orders: distinct ones spread over the whole id range. */
  async followInitial(): Promise<number> {
    const { orders, follow } = this.config;
    const step = orders / follow;
    const channels = new Set<string>();
    for (let i = 0; i < follow; i++) {
      const id = orderIdOf(Math.floor(i * step));
      this.followed.add(id);
      this.followedList.push(id);
      const ch = channelOf(this.config.routing, id);
      const n = this.refs.get(ch) ?? 0;
      this.refs.set(ch, n + 1);
      if (n === 0) channels.add(ch);
    }
    const list = [...channels];
    if (this.sharded) {
      await Promise.all(list.map((ch) => this.sub.ssubscribe(ch)));
    } else {
      for (let i = 0; i < list.length; i += SUBSCRIBE_BATCH) {
        await this.sub.subscribe(...list.slice(i, i + SUBSCRIBE_BATCH));
      }
    }
    return this.refs.size;
  }

  go(): void {
    this.ingested = 0;
    this.needed = 0;
    this.subscribes = 0;
    this.unsubscribes = 0;
    this.commandErrors = 0;
    this.cpuStart = process.cpuUsage();
    this.churnTimer = setInterval(() => this.churn(), CHURN_TICK_MS);
  }

  stop(): InstanceMessage {
    clearInterval(this.churnTimer);
    const cpu = process.cpuUsage(this.cpuStart);
    return {
      type: 'stopped',
      ingested: this.ingested,
      needed: this.needed,
      cpuMs: (cpu.user + cpu.system) / 1_000,
      subscribes: this.subscribes,
      unsubscribes: this.unsubscribes,
      channels: this.refs.size,
      commandErrors: this.commandErrors,
    };
  }

  close(): void {
    this.sub.disconnect();
  }

  private onMessage(message: string): void {
    this.ingested++;
    const event = JSON.parse(message) as { orderId: string };
    if (this.followed.has(event.orderId)) this.needed++;
  }

  /** A subscriber leaves one followed order, another arrives for an order not followed. */
  private churn(): void {
    this.churnCarry += (this.config.churnPerSec * CHURN_TICK_MS) / 1_000;
    for (; this.churnCarry >= 1; this.churnCarry--) {
      const k = Math.floor(Math.random() * this.followedList.length);
      const leaving = this.followedList[k];
      let arriving: string;
      do arriving = orderIdOf(Math.floor(Math.random() * this.config.orders));
      while (this.followed.has(arriving));
      this.followedList[k] = arriving;
      this.followed.delete(leaving);
      this.followed.add(arriving);
      this.release(channelOf(this.config.routing, leaving));
      this.acquire(channelOf(this.config.routing, arriving));
    }
  }

  private acquire(channel: string): void {
    const n = this.refs.get(channel) ?? 0;
    this.refs.set(channel, n + 1);
    if (n > 0) return;
    this.subscribes++;
    const done = this.sharded ? this.sub.ssubscribe(channel) : this.sub.subscribe(channel);
    done.catch(() => this.commandErrors++);
  }

  private release(channel: string): void {
    const n = this.refs.get(channel) ?? 0;
    if (n > 1) {
      this.refs.set(channel, n - 1);
      return;
    }
    this.refs.delete(channel);
    this.unsubscribes++;
    const done = this.sharded ? this.sub.sunsubscribe(channel) : this.sub.unsubscribe(channel);
    done.catch(() => this.commandErrors++);
  }
}

function send(message: InstanceMessage): void {
  process.send?.(message);
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env[INSTANCE_CONFIG_ENV] ?? '') as InstanceConfig;
  const instance = new SimulatedInstance(config);
  // The parent owns this process: when it goes (or closes the channel), so does this one.
  process.on('disconnect', () => {
    instance.close();
    process.exit(0);
  });
  process.on('message', (command: InstanceCommand) => {
    const run = async (): Promise<InstanceMessage> => {
      switch (command.type) {
        case 'follow':
          return { type: 'followed', channels: await instance.followInitial() };
        case 'go':
          instance.go();
          return { type: 'going' };
        case 'stop':
          return instance.stop();
      }
    };
    run().then(send, (err: unknown) => send({ type: 'failed', error: String(err) }));
  });
  await instance.connected();
  send({ type: 'connected' });
}

main().catch((err: unknown) => {
  send({ type: 'failed', error: String(err) });
  process.exit(1);
});
