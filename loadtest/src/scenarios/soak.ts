import { heapUsedAfterGc } from '../service/inspector-gc';
import { AdminClient, orderId } from '../service/admin';
import type { RunningService } from '../service/launcher';
import { readProcStat } from '../sampling/proc-stat';
import { epochUs } from '../stats/latency';
import { promValue } from '../sampling/prom-text';
import { GeneratorMonitor, UsageSampler, type UsageSummary } from '../sampling/sampler';
import { memoryTrend, soakVerdict, type SoakFigures, type SoakSample } from '../soak/memory-trend';
import {
  dropATenth,
  renewTokens,
  soakGroups,
  subscriberToken,
  type SoakGroup,
} from '../soak/soak-clients';
import { SOAK_DRAIN_TIMEOUT_MS, SOAK_TRANSPORTS, soakPlan, type SoakPlan } from '../soak/soak-plan';
import { SoakPublisher } from '../soak/soak-publisher';
import { soakResults } from '../soak/soak-results';
import type { RunResult } from './result';
import type { RunContext, TransportRun } from './run-options';
import { CONNECT_BATCH, CONNECT_BATCH_TIMEOUT_MS, ownService, waitFor } from './run-transport';
import type { Scenario, ScenarioOptions } from './scenario';

const MB = 1024 * 1024;
const round1 = (v: number): number => Math.round(v * 10) / 10;

/**
 * Issue 35 section 5: subscribers over every kind of transport on one service for an hour,
 * with the churn a long-lived deployment sees (streams ended at their maximum age, gRPC
 * connections recycled, tokens expiring and renewed, a tenth of the clients dropped and
 * resumed every minute) and publishes through REST and gRPC. Every minute: the heap after
 * forced GCs, RSS, CPU and event-loop delay; at the end, loss and duplicates per
 * transport and the memory slope over the last 40 minutes with a verdict.
 */
export const soak: Scenario = {
  name: 'soak',
  description: 'an hour of churn on every transport: memory slope after GC, loss, duplicates',
  supports: (t) => SOAK_TRANSPORTS.includes(t),
  run: (ctx, o) => runSoak(ctx, o),
};

let soakCounter = 0;

async function runSoak(ctx: RunContext, o: ScenarioOptions): Promise<RunResult[]> {
  const transports = o.transports.filter(soak.supports);
  if (transports.length === 0) return [];
  const plan = soakPlan(o);
  const record: TransportRun = {
    scenario: 'soak',
    variant: '',
    transport: transports[0],
    subscribers: plan.subscribers,
    orders: plan.orders,
    ratePerOrder: plan.ratePerOrder,
    durationS: plan.durationS,
    payloadBytes: 0,
    env: plan.env,
    inspect: true,
  };
  const own = ownService(ctx, record);
  const service = own
    ? await ctx.launch(record, { inspect: true })
    : (ctx.target as RunningService);
  try {
    return await soakAgainst(ctx, service, transports, plan);
  } finally {
    if (own) await service.stop();
  }
}

async function soakAgainst(
  ctx: RunContext,
  service: RunningService,
  transports: SoakGroup['transport'][],
  plan: SoakPlan,
): Promise<RunResult[]> {
  const startedAt = performance.now();
  const publishToken = ctx.token ?? service.token;
  const admin = new AdminClient(service, publishToken);
  const prefix = `soak${++soakCounter}`;
  // Tokens the load test can sign only against a service in demo mode (it printed one).
  const renewable = ctx.token === undefined && service.token !== undefined;
  const groups = soakGroups(
    service,
    transports,
    prefix,
    plan,
    renewable
      ? { renewable: await subscriberToken(plan.tokenTtlS) }
      : { fixed: ctx.token ?? service.token },
  );
  const all = groups.flatMap((g) => g.subscribers);
  const orderIds = Array.from({ length: plan.orders }, (_, i) => orderId(prefix, i + 1));
  const publisher = new SoakPublisher(service, publishToken, orderIds);
  const sampler =
    service.pid === undefined
      ? undefined
      : UsageSampler.forPid(service.pid, plan.sampleEveryS * 1000);
  const generator = new GeneratorMonitor();
  const samples: SoakSample[] = [];
  let usage: UsageSummary | undefined;
  let error: string | undefined;
  let renewals = 0;
  let forcedDrops = 0;
  let lastSeqs = new Map<string, number>();
  const label = `[soak ${transports.join(',')}]`;
  try {
    await admin.prepare({ orders: plan.orders, ratePerOrder: plan.ratePerOrder, prefix });
    for (let i = 0; i < all.length && !ctx.aborted(); i += CONNECT_BATCH) {
      const batch = all.slice(i, i + CONNECT_BATCH);
      for (const s of batch) s.start();
      // Each subscriber's first event is its order's replayed `created`: the stream is live.
      const ok = await waitFor(
        () => batch.every((s) => s.tracker.highestSeq >= 1),
        CONNECT_BATCH_TIMEOUT_MS,
      );
      const connected = all.filter((s) => s.connected).length;
      ctx.progress(`${label} connecting ${connected}/${all.length}`);
      if (!ok) throw new Error(`only ${connected}/${all.length} subscribers connected`);
    }
    sampler?.start();
    generator.start();
    const windowStart = performance.now();
    for (const g of groups) g.metrics.measureFromUs = epochUs();
    publisher.start(plan.orders * plan.ratePerOrder);
    const renewEveryS = Math.max(1, Math.floor(plan.tokenTtlS / 2));
    for (let t = 1; t <= plan.durationS && !ctx.aborted(); t += 1) {
      await new Promise((r) =>
        setTimeout(r, Math.max(0, windowStart + t * 1000 - performance.now())),
      );
      const exit = service.exitInfo?.();
      if (exit) throw new Error(`the service exited (${exit.code ?? exit.signal}) at ${t} s`);
      if (renewable && t % renewEveryS === 0) {
        await renewTokens(groups, await subscriberToken(plan.tokenTtlS));
        renewals += 1;
      }
      if (t % plan.dropEveryS === 0) forcedDrops += dropATenth(groups);
      if (t % plan.sampleEveryS === 0) {
        const s = {
          ...(await sample(service, admin, sampler, groups, t)),
          published: publisher.published,
        };
        samples.push(s);
        ctx.progress(
          `${label} ${t}/${plan.durationS}s heap ${s.heapMB ?? '?'}MB rss ${s.rssMB}MB ` +
            `loop p99 ${s.loopP99Ms ?? '?'}ms subs ${s.connected}/${all.length} ` +
            `published ${publisher.published}`,
          true,
        );
      }
    }
    await publisher.stop();
    for (const g of groups) g.metrics.measureToUs = epochUs();
    usage = sampler?.stop();
    lastSeqs = await admin.lastSeqs(orderIds);
    await waitFor(
      () => all.every((s) => s.tracker.highestSeq >= (lastSeqs.get(s.orderId) ?? 0)),
      SOAK_DRAIN_TIMEOUT_MS,
    );
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  } finally {
    publisher.close();
    for (const s of all) s.stop();
  }
  usage ??= sampler?.stop();
  const genUsage = generator.stop();
  const promSamples = await admin.metrics().catch(() => undefined);
  await Promise.all(groups.map((g) => g.connector.close()));

  const runs = soakResults({
    plan,
    groups,
    lastSeqs,
    service,
    usage,
    generator: genUsage,
    promSamples,
    error,
    durationS: (performance.now() - startedAt) / 1000,
  });
  const lost = runs.reduce((a, r) => a + r.events.lost, 0);
  const duplicates = runs.reduce((a, r) => a + r.events.duplicates, 0);
  const heap = memoryTrend(samples, 'heapMB', plan.slopeWindowS);
  const figures: SoakFigures = {
    sampleEveryS: plan.sampleEveryS,
    slopeWindowS: plan.slopeWindowS,
    samples,
    heap: heap ?? null,
    rss: memoryTrend(samples, 'rssMB', plan.slopeWindowS) ?? null,
    publishes: publisher.counts,
    publishErrors: [...publisher.errors],
    tokenRenewals: renewals,
    forcedDrops,
    verdict: soakVerdict(heap, lost, duplicates),
  };
  if (publisher.errors.length > 0) {
    ctx.progress(`${label} publish failures, last: ${publisher.errors.join(' | ')}`, true);
  }
  ctx.progress(`${label} ${figures.verdict.text}`, true);
  return runs.map((r, i) => (i === 0 ? { ...r, soak: figures } : r));
}

/** One reading: heap after forced GCs, RSS, CPU since the last one, event-loop delay. */
async function sample(
  service: RunningService,
  admin: AdminClient,
  sampler: UsageSampler | undefined,
  groups: readonly SoakGroup[],
  tS: number,
): Promise<SoakSample> {
  // The service's event-loop histogram restarts at every scrape: read it before the forced
  // GC and scrape again after it, so neither interval counts the pause this reading causes.
  const metrics = (await admin.metrics()) ?? [];
  const heap = await heapUsedAfterGc(service.inspectorUrl);
  const rss = service.pid === undefined ? undefined : readProcStat(service.pid)?.rssBytes;
  await admin.metrics();
  const loop = (name: string): number | undefined => {
    const v = promValue(metrics, name);
    return v === undefined ? undefined : round1(v * 1000);
  };
  const subs = groups.flatMap((g) => g.subscribers);
  return {
    tS,
    heapMB: heap === undefined ? undefined : round1(heap / MB),
    rssMB: round1((rss ?? 0) / MB),
    loopP99Ms: loop('nodejs_eventloop_lag_p99_seconds'),
    loopMaxMs: loop('nodejs_eventloop_lag_max_seconds'),
    cpuPct: sampler?.last()?.cpuPct ?? 0,
    connected: subs.filter((s) => s.connected).length,
    delivered: groups.reduce((a, g) => a + g.metrics.delivered, 0),
  };
}
