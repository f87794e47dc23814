import { CanaryGroup, CANARY_TRANSPORTS, type CanaryResult } from '../hostile/canaries';
import type { Attack, AttackSizes, AttackTarget } from '../hostile/attack';
import { h2CancelFlood } from '../hostile/h2-cancel-flood';
import { oversized } from '../hostile/oversized';
import { PADDING_BYTES, PaddedPublisher } from '../hostile/padded-publisher';
import { reconnectStorm } from '../hostile/reconnect-storm';
import { alive, rssBytes, waitForZeroGauges } from '../hostile/service-state';
import { slowloris } from '../hostile/slowloris';
import { stalledReaders } from '../hostile/stalled-readers';
import { UsageSampler, type UsageSummary } from '../sampling/sampler';
import { heapUsedAfterGc } from '../service/inspector-gc';
import { AdminClient } from '../service/admin';
import type { RunningService } from '../service/launcher';
import { distribution } from '../stats/distribution';
import { serviceUsage, type RunResult } from './result';
import type { RunContext, TransportRun } from './run-options';
import type { Scenario, ScenarioOptions } from './scenario';
import { domainOf, inItsDomain } from './run-domain';
import { PAYLOAD_AS_LARGE_AS_TRACKING } from './steady';

/**
 * Streams end often (so ends meet stalled readers, as in 1a of issue 10) and heartbeats
 * come every second; the publish limit is lifted for the padded order's publisher.
 */
export const HOSTILE_ENV: Readonly<Record<string, string>> = {
  STREAM_MAX_AGE_MS: '5000',
  STREAM_MAX_AGE_JITTER_MS: '1000',
  SSE_HEARTBEAT_MS: '1000',
  LIMIT_PUBLISH_PER_WINDOW: '1000000',
};
const DEFAULT_SIZES: AttackSizes = {
  stalledPerTransport: 5,
  h2Cancels: 400,
  slowlorisPerPort: 50,
  stormCyclesPerSec: 60,
  stormMaxCycles: 900,
  oversizedRounds: 3,
};
const TINY_SIZES: AttackSizes = {
  stalledPerTransport: 1,
  h2Cancels: 40,
  slowlorisPerPort: 3,
  stormCyclesPerSec: 10,
  stormMaxCycles: 15,
  oversizedRounds: 1,
};
/** Gauges must be back at 0 within this after the last client left. */
export const GAUGES_ZERO_TIMEOUT_MS = 10_000;
/** RSS after the storm (after a forced GC) counts as back when within this of the baseline. */
export const RSS_BACK_TOLERANCE_BYTES = 32 * 1024 * 1024;
/**
 * The JS heap after the storm (after a forced GC) counts as back when it holds no more
 * than this beyond the baseline and what the bus is meant to keep: the padded order's
 * replay ring (BUS_RING_SIZE events of PADDING_BYTES, kept for BUS_RING_MAX_AGE_MS).
 */
export const HEAP_BACK_TOLERANCE_BYTES = 8 * 1024 * 1024;
/** The service's replay ring per order (its default BUS_RING_SIZE). */
const RING_SIZE = 256;
/** Padded events a second to the stalled readers' order, and at most this many. */
const PADDED_PER_SEC = 20;
const PADDED_MAX = 600;

interface Phase {
  readonly variant: 'quiet' | 'storm';
  readonly transports: CanaryResult['transport'][];
  readonly durationS: number;
  readonly rate: number;
  readonly sizes: AttackSizes;
}

/**
 * Hostile clients: one canary per transport on a busy order while, at once, stalled
 * readers on every transport, HTTP/2 open-and-cancel floods, slowloris heads, a
 * reconnect storm and oversized messages hit the same fresh service; then the same
 * canaries alone on another fresh service (the quiet run) for comparison. Reports per
 * canary lost/dup/p99 beside the quiet run, whether the service lived (and how it died
 * if not), RSS against its baseline, the gauges back at 0, and how long SIGTERM took.
 */
export const hostile: Scenario = {
  name: 'hostile',
  description:
    'canaries beside stalled readers, h2 cancel floods, slowloris, reconnect storm, oversized input',
  supports: (t) => CANARY_TRANSPORTS.includes(t),
  async run(ctx, o) {
    const transports = CANARY_TRANSPORTS.filter((t) => o.transports.includes(t));
    if (transports.length === 0) return [];
    const base = {
      transports,
      durationS: o.durationS ?? (o.tiny ? 3 : 20),
      rate: o.rate ?? (o.tiny ? 20 : 50),
      sizes: o.tiny ? TINY_SIZES : DEFAULT_SIZES,
    };
    const quiet = await runPhase(ctx, o, { ...base, variant: 'quiet' });
    if (ctx.aborted()) return quiet;
    const storm = await runPhase(ctx, o, { ...base, variant: 'storm' });
    return [...quiet, ...storm.map((r) => beside(r, quiet))];
  },
};

/** Adds the quiet run's p99 to a storm row, so the report shows them side by side. */
function beside(storm: RunResult, quiet: readonly RunResult[]): RunResult {
  const q = quiet.find((r) => r.transport === storm.transport);
  return q ? { ...storm, extra: { quietP99Ms: q.latency.p99Ms, ...storm.extra } } : storm;
}

async function runPhase(ctx: RunContext, o: ScenarioOptions, p: Phase): Promise<RunResult[]> {
  const label = `[hostile ${p.variant}]`;
  const run: TransportRun = inItsDomain({
    scenario: 'hostile',
    variant: p.variant,
    transport: p.transports[0],
    subscribers: p.transports.length,
    ratePerOrder: p.rate,
    durationS: p.durationS,
    payloadBytes: o.payloadBytes ?? PAYLOAD_AS_LARGE_AS_TRACKING.json,
    env: HOSTILE_ENV,
  });
  // Always a fresh service of our own: the run ends by timing its SIGTERM.
  const service = await ctx.launch(run, { inspect: true });
  const token = ctx.token ?? service.token;
  const admin = new AdminClient(service, token);
  const prefix = `h${p.variant[0]}`;
  const canaries = new CanaryGroup(service, token, p.transports, prefix);
  const sampler = service.pid === undefined ? undefined : UsageSampler.forPid(service.pid);
  const extra: Record<string, number | string | boolean> = {};
  const attacks: Attack[] = [];
  let padded: PaddedPublisher | undefined;
  let results: CanaryResult[] = [];
  let usage: UsageSummary | undefined;
  let error: string | undefined;
  const startedAt = performance.now();
  try {
    await admin.prepare({
      orders: p.transports.length,
      ratePerOrder: p.rate,
      payloadBytes: run.payloadBytes,
      domain: domainOf(run),
      prefix,
    });
    await canaries.connect();
    const heapBaseline = await heapUsedAfterGc(service.inspectorUrl);
    if (heapBaseline !== undefined) extra.heapBaselineMB = mb(heapBaseline);
    const rssBaseline = rssBytes(service) ?? 0;
    extra.rssBaselineMB = mb(rssBaseline);
    sampler?.start();
    canaries.measure();
    await admin.start();
    const stormS = Math.max(1, p.durationS - Math.ceil(p.durationS / 4));
    if (p.variant === 'storm') {
      padded = new PaddedPublisher(service, token, `${prefix}-padded`);
      await padded.start(PADDED_PER_SEC, PADDED_MAX);
      const target: AttackTarget = {
        service,
        token,
        paddedOrderId: padded.orderId,
        orderId: `${prefix}-1`,
      };
      attacks.push(
        stalledReaders(target, p.sizes.stalledPerTransport),
        h2CancelFlood(target, p.sizes.h2Cancels),
        slowloris(target, p.sizes.slowlorisPerPort),
        reconnectStorm(target, p.sizes.stormCyclesPerSec, p.sizes.stormMaxCycles),
        oversized(target, p.sizes.oversizedRounds),
      );
      for (const a of attacks) a.start();
    }
    // The storm runs for the first three quarters of the window; the canaries keep
    // going for the rest, so a slow recovery shows in their latency.
    for (let t = 1; t <= p.durationS && !ctx.aborted(); t++) {
      await new Promise((r) => setTimeout(r, 1000));
      if (t === stormS) await stopAttacks(attacks, padded, extra);
      ctx.progress(
        `${label} ${t}/${p.durationS}s ${alive(service) ? '' : 'SERVICE DIED '}rss ${mb(rssBytes(service) ?? 0)}MB`,
      );
      if (!alive(service)) break;
    }
    await stopAttacks(attacks, padded, extra);
    if (alive(service)) await admin.stop().catch(() => undefined);
    usage = sampler?.stop();
    if (alive(service)) results = await canaries.finish(admin);
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  } finally {
    usage ??= sampler?.stop();
    await stopAttacks(attacks, padded, extra);
    await canaries.close();
  }
  const lived = alive(service);
  extra.serviceAlive = lived;
  if (lived) await afterClients(service, admin, extra);
  extra.sigtermMs = await timeStop(service);
  const exit = service.exitInfo?.();
  if (exit !== undefined) {
    extra.exit = exit.signal ?? `code ${String(exit.code)}`;
    if (!lived) extra.stderrTail = exit.stderrTail.slice(-6).join(' | ').slice(0, 1_500);
  }
  if (!lived) error ??= `service died during the run (${String(extra.exit)})`;
  const rows = p.transports.map((transport) =>
    row(
      run,
      transport,
      results.find((r) => r.transport === transport),
      service,
      usage,
      extra,
      error,
      startedAt,
    ),
  );
  ctx.progress(`${label} ${summary(rows, extra)}`, true);
  return rows;
}

async function stopAttacks(
  attacks: Attack[],
  padded: PaddedPublisher | undefined,
  extra: Record<string, number | string | boolean>,
): Promise<void> {
  padded?.stop();
  if (padded !== undefined) extra.paddedPublished = padded.published;
  for (const report of await Promise.all(attacks.splice(0).map((a) => a.stop())))
    Object.assign(extra, report);
}

/** Once every client is gone: gauges back to 0, RSS after a forced GC against its baseline. */
async function afterClients(
  service: RunningService,
  admin: AdminClient,
  extra: Record<string, number | string | boolean>,
): Promise<void> {
  const { gauges, afterMs } = await waitForZeroGauges(admin, GAUGES_ZERO_TIMEOUT_MS);
  extra.connectionsAfter = gauges?.order_transport_connections ?? -1;
  extra.busSubscribersAfter = gauges?.order_bus_subscribers ?? -1;
  extra.gaugesZeroAfterMs = afterMs;
  const heap = await heapUsedAfterGc(service.inspectorUrl);
  const rss = rssBytes(service) ?? 0;
  extra.rssAfterMB = mb(rss);
  extra.rssBack = rss - Number(extra.rssBaselineMB) * 1048576 <= RSS_BACK_TOLERANCE_BYTES;
  if (heap !== undefined && extra.heapBaselineMB !== undefined) {
    // What the bus legitimately keeps after the storm: the padded order's ring.
    const ringBytes = Math.min(Number(extra.paddedPublished ?? 0), RING_SIZE) * PADDING_BYTES;
    extra.heapAfterMB = mb(heap);
    extra.heapRingAllowanceMB = mb(ringBytes);
    extra.heapBack =
      heap - Number(extra.heapBaselineMB) * 1048576 <= ringBytes + HEAP_BACK_TOLERANCE_BYTES;
  }
}

/** SIGTERM with the launcher's bound (SIGKILL after it); ms until the process was gone. */
async function timeStop(service: RunningService): Promise<number> {
  const t0 = performance.now();
  await service.stop();
  return Math.round(performance.now() - t0);
}

const mb = (b: number): number => Math.round(b / 1048576);

function row(
  run: TransportRun,
  transport: CanaryResult['transport'],
  c: CanaryResult | undefined,
  service: RunningService,
  usage: UsageSummary | undefined,
  extra: Record<string, number | string | boolean>,
  error: string | undefined,
  startedAt: number,
): RunResult {
  const counts = c?.counts;
  const okCanary =
    c !== undefined &&
    c.counts.lost === 0 &&
    c.counts.duplicates === 0 &&
    c.counts.outOfOrder === 0;
  const rowError =
    error ??
    (okCanary
      ? undefined
      : `canary ${c === undefined ? 'has no result' : 'lost or duplicated events'}`);
  return {
    scenario: 'hostile',
    variant: run.variant,
    transport,
    server: 'nest',
    settings: {
      subscribers: 1,
      ratePerOrder: run.ratePerOrder,
      durationS: run.durationS,
      warmupS: 0,
      payloadBytes: run.payloadBytes,
      headers: 'bare',
      oneWayDelayMs: 0,
      grpcSharedChannel: false,
      env: { ...run.env },
    },
    ok: rowError === undefined,
    ...(rowError === undefined ? {} : { error: rowError }),
    durationS: Math.round((performance.now() - startedAt) / 100) / 10,
    latency: c?.latency ?? {
      count: 0,
      p50Ms: 0,
      p90Ms: 0,
      p99Ms: 0,
      p999Ms: 0,
      maxMs: 0,
      meanMs: 0,
    },
    events: {
      expected: c?.expected ?? 0,
      delivered: counts?.received ?? 0,
      lost: counts?.lost ?? 0,
      droppedByService: 0,
      duplicates: counts?.duplicates ?? 0,
      outOfOrder: counts?.outOfOrder ?? 0,
      resets: counts?.resets ?? 0,
      skippedByReset: counts?.skippedByReset ?? 0,
      perSec: run.durationS > 0 ? Math.round((counts?.received ?? 0) / run.durationS) : 0,
      expectedPerSec: run.ratePerOrder,
    },
    service: serviceUsage(service, usage, {
      cpuMsPer1kEvents: null,
      eventLoopLagP99Ms: null,
    }),
    generator: { cpuPctAvg: 0, eventLoopDelayP99Ms: 0, saturated: false },
    requestsPerSec: 0,
    connectMs: distribution([]),
    reconnectMs: distribution([]),
    errors: c?.errors ?? {},
    ends: c?.ends ?? {},
    extra: { canaryReconnects: c?.reconnects ?? 0, ...extra },
  };
}

function summary(
  rows: readonly RunResult[],
  extra: Record<string, number | string | boolean>,
): string {
  const canaries = rows
    .map(
      (r) =>
        `${r.transport} lost ${r.events.lost} dup ${r.events.duplicates} p99 ${r.latency.p99Ms}ms`,
    )
    .join(', ');
  return (
    `service alive: ${extra.serviceAlive ? 'yes' : `no (${String(extra.exit)})`}; ${canaries}; ` +
    `gauges after: connections ${String(extra.connectionsAfter ?? '-')} subscribers ${String(extra.busSubscribersAfter ?? '-')}; ` +
    `heap ${String(extra.heapBaselineMB ?? '-')} -> ${String(extra.heapAfterMB ?? '-')} MB (ring ${String(extra.heapRingAllowanceMB ?? '-')}); ` +
    `rss ${String(extra.rssBaselineMB ?? '-')} -> ${String(extra.rssAfterMB ?? '-')} MB; SIGTERM ${String(extra.sigtermMs)} ms`
  );
}
