import { execFileSync } from 'node:child_process';
import { RedisCluster } from '../../../test/support/redis-cluster';
import { RedisServer } from '../../../test/support/redis-server';
import { routingName, type Routing } from '../routing/channels';
import { InstanceProcess } from '../routing/instance-process';
import { RoutingPublisher } from '../routing/publisher';
import { unpinRedis } from '../routing/unpin-redis';
import { commandDelta, RedisInfo, type RedisReading } from '../routing/redis-info';
import { UsageSampler } from '../sampling/sampler';
import { distribution } from '../stats/distribution';
import { HOST_BUSY_OTHER_CPU_PCT } from '../sampling/sampler';
import { plainSettings, serviceUsage, untrackedEvents, type RunResult } from './result';
import type { RunContext } from './run-options';
import { anyTransport, type Scenario, type ScenarioOptions } from './scenario';

/** Shard-channel counts compared with per-order channels. */
export const ROUTING_SHARDS = [16, 64, 256] as const;

interface RoutingSizes {
  readonly orders: number;
  /** Events per second over all orders. */
  readonly rate: number;
  /**
   * One series of runs each: orders the instance follows, and the share of them replaced
   * per second (subscribers leaving and others arriving; 0 isolates the ingest cost).
   */
  readonly series: readonly { readonly follow: number; readonly churn: number }[];
  readonly shards: readonly number[];
  /** Each variant runs once per round; odd rounds run the variants in reverse order. */
  readonly rounds: number;
  readonly durationS: number;
  readonly warmupS: number;
  readonly cluster: boolean;
}

function sizes(o: ScenarioOptions): RoutingSizes {
  if (o.tiny) {
    return {
      orders: 1_000,
      rate: 500,
      series: [{ follow: o.subscribers ?? 20, churn: 0.1 }],
      shards: [16],
      rounds: 1,
      durationS: o.durationS ?? 1,
      warmupS: 0.5,
      cluster: false,
    };
  }
  return {
    orders: 10_000,
    rate: 5_000,
    series:
      o.subscribers !== undefined
        ? [{ follow: o.subscribers, churn: 0.1 }]
        : [
            { follow: 100, churn: 0.1 },
            { follow: 1_000, churn: 0.1 },
            { follow: 1_000, churn: 0 },
          ],
    shards: ROUTING_SHARDS,
    rounds: 2,
    durationS: o.durationS ?? 8,
    warmupS: o.warmupS ?? 1,
    cluster: true,
  };
}

interface Backend {
  readonly name: 'redis' | 'cluster';
  /** Every node (INFO is summed over them). */
  readonly ports: readonly number[];
  readonly redisUrl?: string;
  readonly clusterNodes?: readonly string[];
  readonly shutdown: () => Promise<void>;
}

/**
 * Per-order channels or a fixed number of hashed shard channels? One simulated instance
 * (a child process: see routing/instance.ts) follows S of N orders while a publisher
 * sends events of all N at a steady rate, and subscribers come and go (S/10 orders
 * replaced per second; a series without churn isolates the cost of ingesting). Each
 * routing runs in turn on a private Redis and on a private 3+3 Redis Cluster (sharded
 * pub/sub), interleaved over two rounds so a busy host's swings hit every variant alike.
 * Measured per run: events the instance ingested vs those its subscribers needed, its CPU
 * per needed event, Redis CPU per publish (every node's own getrusage), SUBSCRIBE /
 * UNSUBSCRIBE churn and its Redis time, and the Redis memory the initial subscriptions
 * took.
 */
export const routing: Scenario = {
  name: 'routing',
  description:
    'per-order vs hashed shard channels: what one instance ingests, its CPU, Redis CPU, churn, memory',
  supports: anyTransport,
  run: async (ctx, o) => {
    const s = sizes(o);
    const why = routingUnavailable(s.cluster);
    if (why !== undefined) throw new Error(`routing needs Redis: ${why}`);
    const out: RunResult[] = [];
    for (const start of [startRedis, ...(s.cluster ? [startCluster] : [])]) {
      if (ctx.aborted()) break;
      const backend = await start();
      try {
        out.push(...(await runOn(ctx, o, s, backend)));
      } finally {
        await backend.shutdown();
      }
    }
    return out;
  },
};

function routingUnavailable(cluster: boolean): string | undefined {
  for (const bin of ['redis-server', ...(cluster ? ['redis-cli'] : [])]) {
    try {
      execFileSync(bin, ['--version'], { stdio: 'ignore' });
    } catch {
      return `${bin} is not installed (apt-get install -y redis-server redis-tools)`;
    }
  }
  return undefined;
}

async function startRedis(): Promise<Backend> {
  const server = await RedisServer.launch();
  unpinRedis([server.port]);
  return {
    name: 'redis',
    ports: [server.port],
    redisUrl: server.url,
    shutdown: () => server.shutdown(),
  };
}

async function startCluster(): Promise<Backend> {
  const cluster = await RedisCluster.launch();
  unpinRedis(cluster.ports);
  return {
    name: 'cluster',
    ports: cluster.ports,
    clusterNodes: cluster.ports.map((p) => `127.0.0.1:${p}`),
    shutdown: () => cluster.shutdown(),
  };
}

async function runOn(
  ctx: RunContext,
  o: ScenarioOptions,
  s: RoutingSizes,
  backend: Backend,
): Promise<RunResult[]> {
  const out: RunResult[] = [];
  const info = new RedisInfo(backend.ports);
  const publisher = new RoutingPublisher(
    backend.name === 'cluster' ? { clusterPorts: backend.ports } : { redisUrl: backend.redisUrl },
  );
  const routings: Routing[] = [
    { mode: 'order', shards: 0 },
    ...s.shards.map((shards): Routing => ({ mode: 'shard', shards })),
  ];
  try {
    for (const { follow, churn } of s.series) {
      for (let round = 0; round < s.rounds; round++) {
        const order = round % 2 === 0 ? routings : [...routings].reverse();
        for (const r of order) {
          if (ctx.aborted()) return out;
          const result = await measure(
            ctx,
            o,
            s,
            backend,
            info,
            publisher,
            r,
            follow,
            churn,
            round,
          );
          out.push(result);
        }
      }
    }
  } finally {
    info.close();
    await publisher.close();
  }
  return out;
}

async function measure(
  ctx: RunContext,
  o: ScenarioOptions,
  s: RoutingSizes,
  backend: Backend,
  info: RedisInfo,
  publisher: RoutingPublisher,
  routing: Routing,
  follow: number,
  churn: number,
  round: number,
): Promise<RunResult> {
  const churnPerSec = follow * churn;
  const variant = `${backend.name} follow ${follow} churn ${churnPerSec}/s ${routingName(routing)} #${round + 1}`;
  const instance = await InstanceProcess.start({
    routing,
    redisUrl: backend.redisUrl,
    clusterNodes: backend.clusterNodes,
    orders: s.orders,
    follow,
    churnPerSec,
  });
  try {
    const mem0 = (await info.read()).usedMemoryBytes;
    const channels = await instance.follow();
    const mem1 = (await info.read()).usedMemoryBytes;
    const failed0 = publisher.failures;
    publisher.start(routing, s.orders, s.rate);
    await sleep(s.warmupS * 1_000);
    const samplers = {
      instance: UsageSampler.forPid(instance.pid ?? 0),
      generator: UsageSampler.self(),
      host: UsageSampler.host(),
    };
    const r0 = await info.read();
    const p0 = publisher.published;
    await instance.go();
    for (const x of Object.values(samplers)) x.start();
    const t0 = performance.now();
    await sleep(s.durationS * 1_000);
    const counts = await instance.stop();
    const r1 = await info.read();
    const p1 = publisher.published;
    const wallS = (performance.now() - t0) / 1_000;
    const usage = {
      instance: samplers.instance.stop(),
      generator: samplers.generator.stop(),
      host: samplers.host.stop(),
    };
    publisher.stop();
    const published = p1 - p0;
    const redisCpuMs = r1.cpuMs - r0.cpuMs;
    const extra = figures({
      backend,
      routing,
      s,
      follow,
      churnPerSec,
      published,
      wallS,
      counts,
      redisCpuMs,
      r0,
      r1,
      channels,
      subscriptionBytes: mem1 - mem0,
      publishFailures: publisher.failures - failed0,
    });
    const redisCpuPct = (redisCpuMs / (wallS * 1_000)) * 100;
    const other =
      usage.host.cpuPctAvg - usage.instance.cpuPctAvg - usage.generator.cpuPctAvg - redisCpuPct;
    ctx.progress(
      `[routing ${variant}] ingested ${extra.ingestedPerNeeded}x needed, instance ${extra.instanceCpuUsPerNeeded} us/needed, redis ${extra.redisCpuUsPerPublish} us/publish, ${extra.subscribeCmdsPerSec} (un)subscribes/s, ${extra.subscribedChannels} channels ${extra.subscriptionKB} KB`,
      true,
    );
    const error = problem(routing, counts, extra);
    return {
      scenario: 'routing',
      variant,
      transport: o.transports[0],
      server: 'nest',
      settings: plainSettings({
        subscribers: follow,
        ratePerOrder: s.rate / s.orders,
        durationS: s.durationS,
        warmupS: s.warmupS,
      }),
      ok: error === undefined,
      ...(error === undefined ? {} : { error }),
      durationS: s.durationS,
      latency: { count: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0, meanMs: 0 },
      events: untrackedEvents({
        expected: counts.needed,
        delivered: counts.needed,
        perSec: Math.round(counts.needed / wallS),
        expectedPerSec: Math.round(counts.needed / wallS),
      }),
      service: serviceUsage({ pid: instance.pid, pinned: false }, usage.instance, {
        cpuMsPer1kEvents:
          counts.needed > 0 ? Math.round((counts.cpuMs / counts.needed) * 1_000 * 10) / 10 : null,
        eventLoopLagP99Ms: null,
      }),
      generator: {
        cpuPctAvg: usage.generator.cpuPctAvg,
        eventLoopDelayP99Ms: 0,
        saturated: false,
      },
      host: {
        cpuPctAvg: usage.host.cpuPctAvg,
        otherCpuPctAvg: Math.round(Math.max(0, other) * 10) / 10,
        busy: other >= HOST_BUSY_OTHER_CPU_PCT,
      },
      requestsPerSec: 0,
      connectMs: distribution([]),
      reconnectMs: distribution([]),
      errors: {},
      ends: {},
      extra,
    };
  } finally {
    publisher.stop();
    await instance.close();
  }
}

interface FigureInputs {
  readonly backend: Backend;
  readonly routing: Routing;
  readonly s: RoutingSizes;
  readonly follow: number;
  readonly churnPerSec: number;
  readonly published: number;
  readonly wallS: number;
  readonly counts: Awaited<ReturnType<InstanceProcess['stop']>>;
  readonly redisCpuMs: number;
  readonly r0: RedisReading;
  readonly r1: RedisReading;
  readonly channels: number;
  readonly subscriptionBytes: number;
  readonly publishFailures: number;
}

function figures(x: FigureInputs): Record<string, number | string> {
  const { counts, wallS, published } = x;
  const pub = commandDelta(x.r1, x.r0, ['publish', 'spublish']);
  const churn = commandDelta(x.r1, x.r0, [
    'subscribe',
    'unsubscribe',
    'ssubscribe',
    'sunsubscribe',
  ]);
  const round1 = (n: number) => Math.round(n * 10) / 10;
  const round2 = (n: number) => Math.round(n * 100) / 100;
  return {
    backend: x.backend.name,
    routing: routingName(x.routing),
    orders: x.s.orders,
    follow: x.follow,
    churnOrdersPerSec: x.churnPerSec,
    publishedPerSec: Math.round(published / wallS),
    ingestedPerSec: Math.round(counts.ingested / wallS),
    neededPerSec: Math.round(counts.needed / wallS),
    // What the instance receives per event its subscribers need: 1 is ideal.
    ingestedPerNeeded: counts.needed > 0 ? round2(counts.ingested / counts.needed) : 0,
    ingestedPctOfPublished: published > 0 ? round1((counts.ingested / published) * 100) : 0,
    instanceCpuPct: round1((counts.cpuMs / (wallS * 1_000)) * 100),
    instanceCpuUsPerNeeded: counts.needed > 0 ? round1((counts.cpuMs * 1_000) / counts.needed) : 0,
    redisCpuPct: round1((x.redisCpuMs / (wallS * 1_000)) * 100),
    redisCpuUsPerPublish: published > 0 ? round2((x.redisCpuMs * 1_000) / published) : 0,
    // Inside the PUBLISH call (fan-out to subscribers' buffers); the rest is I/O.
    redisPublishCallUs: pub.calls > 0 ? round2(pub.usec / pub.calls) : 0,
    subscribeCmdsPerSec: round1((counts.subscribes + counts.unsubscribes) / wallS),
    redisSubscribeUsPerSec: round1(churn.usec / wallS),
    subscribedChannels: counts.channels,
    subscriptionKB: round1(x.subscriptionBytes / 1_024),
    subscriptionBytesPerChannel: x.channels > 0 ? Math.round(x.subscriptionBytes / x.channels) : 0,
    initialChannels: x.channels,
    commandErrors: counts.commandErrors,
    publishFailures: x.publishFailures,
  };
}

/** Why the run's figures cannot be trusted, or undefined. */
function problem(
  routing: Routing,
  counts: Awaited<ReturnType<InstanceProcess['stop']>>,
  extra: Record<string, number | string>,
): string | undefined {
  if (counts.commandErrors > 0) return `${counts.commandErrors} (un)subscribe commands failed`;
  if (Number(extra.publishFailures) > 0) return `${extra.publishFailures} publishes failed`;
  if (counts.needed === 0) return 'the instance received no event it needed';
  // Per-order routing: the only extra messages are ones already in flight when a channel
  // was unsubscribed, a few per departure at most.
  if (routing.mode === 'order' && counts.ingested > counts.needed + 10 * counts.unsubscribes + 10) {
    return `per-order routing ingested ${counts.ingested} events for ${counts.needed} needed`;
  }
  return undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
