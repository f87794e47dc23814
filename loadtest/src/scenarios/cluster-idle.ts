import { execFileSync } from 'node:child_process';
import type { LocalStack } from '../../../deploy/stack/local-stack';
import { promValue } from '../sampling/prom-text';
import { UsageSampler, type UsageSummary } from '../sampling/sampler';
import { AdminClient } from '../service/admin';
import { distribution } from '../stats/distribution';
import { plainSettings, serviceUsage, untrackedEvents, type RunResult } from './result';
import type { RunContext } from './run-options';
import type { ScenarioOptions } from './scenario';
import { PAYLOAD_AS_LARGE_AS_PLAIN_TRACKING } from './steady';

/** Orders published through app1 while app2 has no subscriber at all. */
export const IDLE_INSTANCE_ORDERS = [1_000, 10_000, 100_000] as const;
/** Creating 100,000 orders through Redis takes a while (one publish script each). */
const PREPARE_TIMEOUT_MS = 180_000;
/** Events per second over all orders, as in the baseline (20,000 orders, 10,000/s). */
export const IDLE_INSTANCE_RATE = 10_000;

/**
 * Scale-out adds capacity only if an instance receives what its own subscribers need.
 * app1's simulator publishes N streams through Redis at IDLE_INSTANCE_RATE events/s in
 * total (payload events as large as the unpadded tracking updates this phase published
 * in the order domain); app2 has no subscriber. Measured: app2's CPU and RSS (start and end of the
 * window), the events its bus ingested (must stay 0: per-order routing), and app1's and
 * Redis's CPU, whose cost per publish is the price of the shared store.
 */
export async function idleInstancePhase(
  ctx: RunContext,
  o: ScenarioOptions,
  stack: LocalStack,
  token: string,
): Promise<RunResult[]> {
  const [app1, app2] = stack.instances;
  const admin = (i: typeof app1) =>
    new AdminClient(
      { host: '127.0.0.1', httpPort: i.httpPort, httpsPort: 0, grpcPort: i.grpcPort, pid: 0 },
      token,
    );
  const publisher = admin(app1);
  const idle = admin(app2);
  const durationS = o.durationS ?? (o.tiny ? 1 : 10);
  const steps = o.tiny ? [100, 1_000] : IDLE_INSTANCE_ORDERS;
  const rate = o.tiny ? 1_000 : IDLE_INSTANCE_RATE;
  const redisPid = redisProcessId(stack.urls.redis);
  const out: RunResult[] = [];
  for (const orders of steps) {
    if (ctx.aborted()) break;
    await publisher.prepare(
      {
        orders,
        ratePerOrder: rate / orders,
        prefix: `idle${orders}`,
        domain: 'payload',
        payloadBytes: idlePayloadBytes(o),
      },
      PREPARE_TIMEOUT_MS,
    );
    const ingestedBefore = await ingested(idle);
    const samplers = [app1.process.pid, app2.process.pid, redisPid].map((pid) =>
      UsageSampler.forPid(pid ?? 0),
    );
    for (const s of samplers) s.start();
    const sim0 = await publisher.start();
    await new Promise((r) => setTimeout(r, durationS * 1_000));
    const sim1 = await publisher.stop();
    const [u1, u2, uRedis] = samplers.map((s) => s.stop());
    const published = sim1.published - sim0.published;
    const backend = (await idle.metrics())?.find((m) => m.name === 'order_store_up')?.labels;
    const extra = {
      store: backend?.backend ?? 'unknown',
      simulatorFailed: sim1.failed - sim0.failed,
      orders,
      publishedPerSec: Math.round(published / durationS),
      app2IngestedEvents: (await ingested(idle)) - ingestedBefore,
      // No subscriber anywhere: the report's per-instance delivery note reads 0 / 0.
      app1Delivered: 0,
      app2Delivered: 0,
      app2CpuPct: u2.cpuPctAvg,
      app2RssStartMB: mb(u2.rssStartBytes),
      app2RssEndMB: mb(u2.rssEndBytes),
      app1CpuPct: u1.cpuPctAvg,
      redisCpuPct: uRedis.cpuPctAvg,
      redisCpuUsPerPublish: published > 0 ? Math.round((cpuMs(uRedis) * 1_000) / published) : 0,
    };
    ctx.progress(
      `[cluster idle-instance ${orders} orders] app2 cpu ${extra.app2CpuPct}% rss ${extra.app2RssStartMB}->${extra.app2RssEndMB} MB, ingested ${extra.app2IngestedEvents}; ${extra.publishedPerSec} ev/s published, redis ${extra.redisCpuUsPerPublish} us/publish`,
      true,
    );
    out.push(row(orders, durationS, rate, app2.process.pid, u2, o, extra));
  }
  return out;
}

async function ingested(admin: AdminClient): Promise<number> {
  return promValue((await admin.metrics()) ?? [], 'order_events_ingested_total') ?? 0;
}

/** The redis-server's own pid, as it reports it (`INFO server`). */
function redisProcessId(url: string): number | undefined {
  const port = new URL(url).port;
  const info = execFileSync('redis-cli', ['-p', port, 'info', 'server'], { encoding: 'utf8' });
  const pid = /process_id:(\d+)/.exec(info)?.[1];
  return pid === undefined ? undefined : Number(pid);
}

function cpuMs(u: UsageSummary): number {
  return u.cpuMsTotal;
}

function mb(bytes: number): number {
  return Math.round((bytes / 1_048_576) * 10) / 10;
}

/** The phase's event size: as large as the unpadded tracking updates it once published. */
function idlePayloadBytes(o: ScenarioOptions): number {
  return o.payloadBytes ?? PAYLOAD_AS_LARGE_AS_PLAIN_TRACKING;
}

/** A table row: app2 is the run's "service"; no subscriber, so no latency or events. */
function row(
  orders: number,
  durationS: number,
  rate: number,
  pid: number | undefined,
  usage: UsageSummary,
  o: ScenarioOptions,
  extra: Record<string, number | string>,
): RunResult {
  const ok = extra.app2IngestedEvents === 0;
  return {
    scenario: 'cluster',
    variant: `idle-instance ${orders} orders`,
    transport: o.transports[0],
    server: 'nest',
    settings: {
      ...plainSettings({ subscribers: 0, ratePerOrder: rate / orders, durationS }),
      payloadBytes: idlePayloadBytes(o),
      env: { STREAM_DOMAIN: 'payload' },
    },
    ok,
    ...(ok ? {} : { error: 'the idle instance ingested events of orders it does not serve' }),
    durationS,
    latency: { count: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0, meanMs: 0 },
    events: untrackedEvents({ expected: 0, delivered: 0, perSec: 0, expectedPerSec: 0 }),
    service: serviceUsage({ pid, pinned: false }, usage, {
      cpuMsPer1kEvents: null,
      eventLoopLagP99Ms: null,
    }),
    generator: { cpuPctAvg: 0, eventLoopDelayP99Ms: 0, saturated: false },
    requestsPerSec: 0,
    connectMs: distribution([]),
    reconnectMs: distribution([]),
    errors: {},
    ends: {},
    extra,
  };
}
