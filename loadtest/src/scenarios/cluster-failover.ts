import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Cluster } from 'ioredis';
import { redisKeys } from '@app/redis-store/redis-keys';
import { RedisCluster } from '../../../test/support/redis-cluster';
import { createConnector } from '../clients/connector-factory';
import { RunMetrics } from '../clients/subscriber';
import type { Connector, TransportName } from '../clients/transport';
import { WatchedSubscriber } from '../failover/watched-subscriber';
import { unpinRedis } from '../routing/unpin-redis';
import { HOST_BUSY_OTHER_CPU_PCT, UsageSampler, type UsageSummary } from '../sampling/sampler';
import { AdminClient, orderId } from '../service/admin';
import { launchService, SERVICE_ENTRY, type RunningService } from '../service/launcher';
import { distribution } from '../stats/distribution';
import { epochUs } from '../stats/latency';
import { sumCounts } from '../stats/seq-tracker';
import { eventCounts, plainSettings, serviceUsage, type RunResult } from './result';
import type { RunContext } from './run-options';
import { waitFor } from './run-transport';
import { anyTransport, type Scenario, type ScenarioOptions } from './scenario';

/** The four transports a failover run follows at once (plain HTTP/1.1 and gRPC ports). */
export const FAILOVER_TRANSPORTS: readonly TransportName[] = ['grpc', 'sse', 'ws', 'longpoll'];
/** Acknowledged writes only the dying master gets: the replica is cut off this long. */
const LOSS_WINDOW_MS = 300;
const READY_TIMEOUT_MS = 20_000;
const DRAIN_TIMEOUT_MS = 20_000;
const STATUS_POLL_MS = 100;

interface Sizes {
  readonly orders: number;
  readonly ratePerOrder: number;
  /** Publishing before the first fault, between the faults, and after the second. */
  readonly phaseS: readonly [number, number, number];
}

function sizes(o: ScenarioOptions): Sizes {
  return o.tiny
    ? { orders: 9, ratePerOrder: o.rate ?? 5, phaseS: [1, 2, 2] }
    : { orders: 24, ratePerOrder: o.rate ?? 5, phaseS: [5, 6, 8] };
}

/** One fault's timeline and the orders on the shard it hit. */
interface Fault {
  readonly name: 'failover' | 'kill';
  /** performance.now() ms */
  readonly at: number;
  /** The same moment on the epoch clock the events' publishedAtUs use. */
  readonly atUs: number;
  readonly promotedAt: number;
  readonly orders: ReadonlySet<string>;
}

/**
 * Redis Cluster failover under load: a private 3+3 cluster, two service instances on it
 * (app1 publishes with its simulator at a steady rate), and on each instance one
 * subscriber per order and transport. Mid-run, `CLUSTER FAILOVER` on one shard's replica
 * (clean: nothing acknowledged is lost) and then a killed master on another shard, made
 * lossy on purpose: its replica is frozen and cut off for LOSS_WINDOW_MS, so the master
 * acknowledges and delivers events its replica never gets. Per transport: delivered,
 * lost (gaps nobody was told of), duplicates, resets (explicit), clients left holding an
 * event Redis replaced (`divergent`), and per fault the time until every subscriber of
 * the hit shard got an event again; publishing's failures and its own recovery too.
 */
export const clusterFailover: Scenario = {
  name: 'cluster-failover',
  description:
    'Redis Cluster: CLUSTER FAILOVER and a killed master mid-run, 2 instances, 4 transports: loss, duplicates, resets, recovery',
  supports: anyTransport,
  run: async (ctx, o) => {
    const why = unavailable();
    if (why !== undefined) throw new Error(`cluster-failover: ${why}`);
    const cluster = await RedisCluster.launch();
    const apps: RunningService[] = [];
    try {
      unpinRedis(cluster.ports);
      const env = { REDIS_CLUSTER_NODES: cluster.seedNodes };
      // One at a time into `apps`: if the second fails to start, the first is still stopped.
      for (let i = 0; i < 2; i++) apps.push(await launchService({ env }));
      return await runOnCluster(ctx, o, cluster, apps);
    } finally {
      for (const app of apps) await app.stop();
      await cluster.shutdown();
    }
  },
};

function unavailable(): string | undefined {
  for (const bin of ['redis-server', 'redis-cli']) {
    try {
      execFileSync(bin, ['--version'], { stdio: 'ignore' });
    } catch {
      return `${bin} is not installed (apt-get install -y redis-server redis-tools)`;
    }
  }
  return existsSync(SERVICE_ENTRY) ? undefined : `${SERVICE_ENTRY} is missing: npm run build`;
}

async function runOnCluster(
  ctx: RunContext,
  o: ScenarioOptions,
  cluster: RedisCluster,
  apps: readonly RunningService[],
): Promise<RunResult[]> {
  const s = sizes(o);
  const token = ctx.token ?? apps[0].token;
  if (token === undefined) throw new Error('no demo token in the banner: pass --token');
  const admin = new AdminClient(apps[0], token);
  const transports = FAILOVER_TRANSPORTS.filter((t) => o.transports.includes(t));
  const chosen = transports.length > 0 ? transports : FAILOVER_TRANSPORTS;
  const prefix = `fo${Date.now() % 100_000}`;
  const ids = Array.from({ length: s.orders }, (_, i) => orderId(prefix, i + 1));
  await admin.prepare({ orders: s.orders, ratePerOrder: s.ratePerOrder, prefix });

  const metrics = new Map(chosen.map((t) => [t, new RunMetrics()]));
  const connectors: Connector[] = [];
  const subs: WatchedSubscriber[] = [];
  for (const t of chosen) {
    for (const [k, app] of apps.entries()) {
      const connector = createConnector(t, {
        host: '127.0.0.1',
        httpPort: app.httpPort,
        httpsPort: app.httpsPort,
        grpcPort: app.grpcPort,
        token,
      });
      connectors.push(connector);
      for (const id of ids) {
        subs.push(
          new WatchedSubscriber(t, `app${k + 1}`, id, connector, metrics.get(t) as RunMetrics),
        );
      }
    }
  }
  const sampler = UsageSampler.forPid(apps[0].pid ?? 0);
  const app2Sampler = UsageSampler.forPid(apps[1].pid ?? 0);
  const host = UsageSampler.host();
  const poller = statusPoller(admin);
  let faults: Fault[] = [];
  let error: string | undefined;
  let usage: UsageSummary | undefined;
  let usage2: UsageSummary | undefined;
  let hostUsage: UsageSummary | undefined;
  let lastSeqs = new Map<string, number>();
  let windowS = 0;
  try {
    for (const w of subs) w.subscriber.start();
    const ready = await waitFor(
      () => subs.every((w) => w.subscriber.tracker.highestSeq >= 1),
      READY_TIMEOUT_MS,
    );
    if (!ready) throw new Error('not every subscriber got its order within 20 s');
    for (const m of metrics.values()) m.measureFromUs = epochUs();
    const start = performance.now();
    for (const x of [sampler, app2Sampler, host]) x.start();
    poller.start();
    await admin.start();
    ctx.progress(`[cluster-failover] publishing, ${subs.length} subscribers`, true);
    faults = await injectFaults(ctx, cluster, ids, s.phaseS);
    await admin.stop();
    windowS = (performance.now() - start) / 1_000;
    [usage, usage2, hostUsage] = [sampler.stop(), app2Sampler.stop(), host.stop()];
    lastSeqs = await admin.lastSeqs(ids);
    await waitFor(
      () => subs.every((w) => w.subscriber.tracker.highestSeq >= (lastSeqs.get(w.orderId) ?? 0)),
      DRAIN_TIMEOUT_MS,
    );
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  } finally {
    poller.stop();
    for (const w of subs) w.subscriber.stop();
  }
  usage ??= sampler.stop();
  usage2 ??= app2Sampler.stop();
  hostUsage ??= host.stop();
  // Others: what neither instance took (Redis, the generator and other jobs on the host).
  const other = Math.max(
    0,
    Math.round((hostUsage.cpuPctAvg - usage.cpuPctAvg - usage2.cpuPctAvg) * 10) / 10,
  );
  const hostFigures = {
    cpuPctAvg: hostUsage.cpuPctAvg,
    otherCpuPctAvg: other,
    busy: other >= HOST_BUSY_OTHER_CPU_PCT,
  };
  const history = await readHistories(cluster, ids).catch(
    () => new Map<string, Map<number, number>>(),
  );
  await Promise.all(connectors.map((c) => c.close()));

  const publishing = {
    published: poller.last().published - poller.first().published,
    failed: poller.last().failed - poller.first().failed,
    ...Object.fromEntries(
      faults.map((f, i) => [
        `${f.name}PublishRecoveryMs`,
        poller.recoveryMs(f.at, faults[i + 1]?.at ?? Infinity),
      ]),
    ),
  };
  return chosen.map((t) =>
    row(t, s, o, {
      subs: subs.filter((w) => w.transport === t),
      metrics: metrics.get(t) as RunMetrics,
      lastSeqs,
      history,
      faults,
      publishing,
      usage,
      app2CpuPct: usage2.cpuPctAvg,
      host: hostFigures,
      pid: apps[0].pid,
      windowS,
      error,
    }),
  );
}

/**
 * The two faults, each on its own shard (by slot range, so orders on the other shards
 * show what a fault does not touch), with publishing phases before, between and after.
 * The clean failover takes the first shard, the kill the other shard with most orders.
 */
async function injectFaults(
  ctx: RunContext,
  cluster: RedisCluster,
  ids: readonly string[],
  phaseS: readonly [number, number, number],
): Promise<Fault[]> {
  const slots = new Map<string, number>();
  for (const id of ids) slots.set(id, await cluster.slotOf(`{${id}}`));
  const ordersOf = (shard: { slots: readonly (readonly [number, number])[] }) =>
    new Set(
      ids.filter((id) => {
        const slot = slots.get(id) ?? -1;
        return shard.slots.some(([a, b]) => slot >= a && slot <= b);
      }),
    );
  const faults: Fault[] = [];
  await sleep(phaseS[0] * 1_000);

  const first = (await cluster.shards())[0];
  const failoverAt = performance.now();
  const failoverAtUs = epochUs();
  await cluster.failover(first.replicas[0]);
  faults.push({
    name: 'failover',
    at: failoverAt,
    atUs: failoverAtUs,
    promotedAt: performance.now(),
    orders: ordersOf(first),
  });
  ctx.progress(`[cluster-failover] CLUSTER FAILOVER done`, true);
  await sleep(phaseS[1] * 1_000);

  // The other shard with the most orders (so the loss is seen at any size).
  const second = (await cluster.shards())
    .filter((sh) => sh.master !== first.replicas[0])
    .sort((a, b) => ordersOf(b).size - ordersOf(a).size)[0];
  const replica = second.replicas[0];
  cluster.pause(replica);
  let killAt: number;
  let killAtUs: number;
  try {
    await cluster.command(second.master, 'CLIENT', 'KILL', 'TYPE', 'replica');
    await sleep(LOSS_WINDOW_MS);
    killAt = performance.now();
    killAtUs = epochUs();
    await cluster.kill(second.master);
  } finally {
    cluster.resume(replica);
  }
  await cluster.waitPromoted(replica);
  faults.push({
    name: 'kill',
    at: killAt,
    atUs: killAtUs,
    promotedAt: performance.now(),
    orders: ordersOf(second),
  });
  ctx.progress(`[cluster-failover] master killed, replica promoted`, true);
  await sleep(phaseS[2] * 1_000);
  return faults;
}

/** The simulator's counters every STATUS_POLL_MS, to time when publishing recovered. */
function statusPoller(admin: AdminClient) {
  const points: { t: number; published: number; failed: number }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let busy = false;
  const poll = async () => {
    if (busy) return;
    busy = true;
    try {
      const st = await admin.status();
      points.push({ t: performance.now(), published: st.published, failed: st.failed });
    } catch {
      // app1 itself stays up; a missed poll only coarsens the timing.
    } finally {
      busy = false;
    }
  };
  const zero = { t: 0, published: 0, failed: 0 };
  return {
    start: () => {
      void poll();
      timer = setInterval(() => void poll(), STATUS_POLL_MS);
    },
    stop: () => clearInterval(timer),
    first: () => points[0] ?? zero,
    last: () => points[points.length - 1] ?? zero,
    /** ms from `at` to the last poll before `until` in which failed publishes still grew. */
    recoveryMs: (at: number, until: number): number => {
      let last = at;
      for (let i = 1; i < points.length; i++) {
        const p = points[i];
        if (p.t > at && p.t < until && p.failed > points[i - 1].failed) last = p.t;
      }
      return Math.round(last - at);
    },
  };
}

/** Each order's history as Redis keeps it now: seq -> publishedAtUs. */
async function readHistories(
  cluster: RedisCluster,
  ids: readonly string[],
): Promise<Map<string, Map<number, number>>> {
  const keys = redisKeys('os');
  const client = new Cluster(cluster.livePorts.map((port) => ({ host: '127.0.0.1', port })));
  client.on('error', () => undefined);
  try {
    const out = new Map<string, Map<number, number>>();
    for (const id of ids) {
      const list = await client.lrange(keys.history(id), 0, -1);
      const events = list.map((j) => JSON.parse(j) as { seq: number; publishedAtUs: number });
      out.set(id, new Map(events.map((e) => [e.seq, e.publishedAtUs])));
    }
    return out;
  } finally {
    client.disconnect();
  }
}

interface RowInputs {
  readonly subs: readonly WatchedSubscriber[];
  readonly metrics: RunMetrics;
  readonly lastSeqs: ReadonlyMap<string, number>;
  readonly history: ReadonlyMap<string, ReadonlyMap<number, number>>;
  readonly faults: readonly Fault[];
  readonly publishing: Record<string, number>;
  readonly usage: UsageSummary;
  readonly app2CpuPct: number;
  readonly host: NonNullable<RunResult['host']>;
  readonly pid: number | undefined;
  readonly windowS: number;
  readonly error: string | undefined;
}

function row(t: TransportName, s: Sizes, o: ScenarioOptions, x: RowInputs): RunResult {
  const counts = x.subs.map((w) =>
    w.subscriber.tracker.counts(x.lastSeqs.get(w.orderId) ?? w.subscriber.tracker.highestSeq),
  );
  const total = sumCounts(counts);
  const divergent = x.subs.reduce(
    (a, w) => a + w.divergentFrom(x.history.get(w.orderId) ?? new Map()),
    0,
  );
  const faultFigures: Record<string, number | string> = {};
  for (const f of x.faults) {
    const hit = x.subs.filter((w) => f.orders.has(w.orderId));
    const waits = hit.map((w) => w.recoveredAfter(f.atUs));
    const missing = waits.filter((m) => m === undefined).length;
    faultFigures[`${f.name}Orders`] = f.orders.size;
    // Until the harness saw the cluster settled again (its polling included).
    faultFigures[`${f.name}SettledMs`] = Math.round(f.promotedAt - f.at);
    // Until every subscriber of the hit shard had an event published after the fault (the
    // worst one): publishing and delivery both back.
    faultFigures[`${f.name}RecoveryMs`] =
      missing > 0 ? `${missing} never` : Math.round(Math.max(0, ...(waits as number[])));
    faultFigures[`${f.name}ResetSubscribers`] = hit.filter((w) => w.resets > 0).length;
  }
  const error =
    x.error ??
    (total.lost > 0 || total.duplicates > 0 || total.outOfOrder > 0
      ? `${total.lost} lost, ${total.duplicates} duplicates, ${total.outOfOrder} out of order`
      : undefined);
  const expected = x.subs.reduce((a, w) => a + (x.lastSeqs.get(w.orderId) ?? 0), 0);
  return {
    scenario: 'cluster-failover',
    variant: 'failover + killed master',
    transport: t,
    server: 'nest',
    settings: plainSettings({
      subscribers: x.subs.length,
      ratePerOrder: s.ratePerOrder,
      durationS: s.phaseS.reduce((a, b) => a + b, 0),
    }),
    ok: error === undefined,
    ...(error === undefined ? {} : { error }),
    durationS: Math.round(x.windowS * 10) / 10,
    latency: x.metrics.latency.summary(),
    events: eventCounts(total, {
      expected,
      droppedByService: 0,
      perSec: x.windowS > 0 ? Math.round(total.received / x.windowS) : 0,
      expectedPerSec: x.subs.length * s.ratePerOrder,
    }),
    service: serviceUsage({ pid: x.pid, pinned: false }, x.usage, {
      cpuMsPer1kEvents: null,
      eventLoopLagP99Ms: null,
    }),
    generator: { cpuPctAvg: 0, eventLoopDelayP99Ms: 0, saturated: false },
    host: x.host,
    requestsPerSec: 0,
    connectMs: distribution(x.metrics.connectMs),
    reconnectMs: distribution(x.metrics.reconnectMs),
    errors: x.metrics.errors.toJSON(),
    ends: x.metrics.ends.toJSON(),
    extra: {
      orders: s.orders,
      subscribersApp1: x.subs.filter((w) => w.instance === 'app1').length,
      subscribersApp2: x.subs.filter((w) => w.instance === 'app2').length,
      divergent,
      app1CpuPct: x.usage.cpuPctAvg,
      app2CpuPct: x.app2CpuPct,
      ...faultFigures,
      ...x.publishing,
      ...(o.tiny ? { tiny: 'yes' } : {}),
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
