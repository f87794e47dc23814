import { createConnector } from '../clients/connector-factory';
import { RunMetrics, Subscriber, type SubscriberOptions } from '../clients/subscriber';
import { RawGrpcConnector } from '../clients/lean/raw-grpc-connector';
import { ReadBatcher } from '../clients/read-batcher';
import {
  readsInBatches,
  readsLean,
  readsRawHttp2,
  type Connector,
  type ConnectorOptions,
} from '../clients/transport';
import { TcpProxy } from '../proxy/tcp-proxy';
import { CoreWindow, type CoreUsage } from '../sampling/core-window';
import { gcOver, gcTotals, type GcTotals } from '../sampling/gc-window';
import { promValue, type PromSample } from '../sampling/prom-text';
import {
  GeneratorMonitor,
  GENERATOR_SATURATED_CPU_PCT,
  type GeneratorUsage,
  HOST_BUSY_OTHER_CPU_PCT,
  UsageSampler,
  type UsageSummary,
} from '../sampling/sampler';
import { AdminClient, orderId, type ServiceControl } from '../service/admin';
import { SERVICE_CPU, type RunningService } from '../service/launcher';
import { distribution } from '../stats/distribution';
import { epochUs } from '../stats/latency';
import { sumCounts, type SeqCounts } from '../stats/seq-tracker';
import { latencySampleStride } from './latency-sample';
import { eventCounts, serviceUsage, type RunResult } from './result';
import { domainOf, inItsDomain } from './run-domain';
import type { RunContext, TransportRun } from './run-options';

/** Subscribers opened at once while connecting; each waits for its ack. */
export const CONNECT_BATCH = 200;
export const CONNECT_BATCH_TIMEOUT_MS = 15_000;
export const DEFAULT_DRAIN_TIMEOUT_MS = 5_000;
const PROGRESS_INTERVAL_MS = 1_000;
/** The service's and the bare server's heap allocation total (Node 26+; see ServiceUsage). */
export const HEAP_ALLOCATED_METRIC = 'nodejs_heap_allocated_bytes_total';

/** What the server's /metrics says at the edges of the window (undefined: not reported). */
interface WindowCounters {
  readonly allocated: number | undefined;
  readonly gc: GcTotals | undefined;
}

let runCounter = 0;

/** Hooks a scenario can hang on a run without copying the run loop. */
export interface RunHooks {
  /** After the orders exist, before any subscriber connects. */
  readonly beforeConnect?: (s: LiveRun) => Promise<void> | void;
  /**
   * Each time the count of connected subscribers reaches one of `at` (the connect loop
   * splits its batches there) and they have their first event, before more connect:
   * plateaus to measure at.
   */
  readonly connectPauses?: {
    readonly at: readonly number[];
    readonly run: (s: LiveRun) => Promise<void>;
  };
  /** After every subscriber is connected, before the clock starts. */
  readonly beforeStart?: (s: LiveRun) => Promise<void> | void;
  /** Once per second while publishing. */
  readonly tick?: (s: LiveRun, elapsedS: number) => void;
  /** After draining, before subscribers close: add figures to `extra`. */
  readonly afterDrain?: (s: LiveRun) => Promise<Record<string, number | string | boolean>>;
  readonly subscriberOptions?: (index: number) => SubscriberOptions;
}

export interface LiveRun {
  readonly run: TransportRun;
  readonly service: RunningService;
  readonly admin: ServiceControl;
  readonly subscribers: readonly Subscriber[];
  readonly metrics: RunMetrics;
  /** Separate metrics of subscriber 0 when it alone goes through the proxy. */
  readonly firstMetrics: RunMetrics;
  readonly proxy: TcpProxy | undefined;
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves when `cond()` holds, polling every `everyMs`, or after `timeoutMs` (false). */
export async function waitFor(
  cond: () => boolean,
  timeoutMs: number,
  everyMs = 50,
): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() >= until) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return true;
}

const mb = (b: number): string => `${(b / 1048576).toFixed(0)}MB`;

/**
 * One transport run: start a service (or use --target), create the orders, connect the
 * subscribers, start the simulator's clock, publish for `durationS`, stop, wait for the
 * tail to arrive, then count every subscriber against its order's last seq.
 */
export async function runTransport(
  ctx: RunContext,
  given: TransportRun,
  hooks: RunHooks = {},
): Promise<RunResult> {
  const run = inItsDomain(given);
  const target = targetOf(ctx, run);
  const ignored = Object.keys(run.env ?? {}).filter(
    (k) =>
      k !== 'STREAM_DOMAIN' ||
      (target !== ctx.payloadTarget && (run.server ?? ctx.server) === 'nest'),
  );
  if (target !== undefined && ignored.length > 0) {
    ctx.progress(
      `[${run.scenario} ${run.transport}] note: --target runs without ${ignored.join(', ')}`,
      true,
    );
  }
  const service = target ?? (await ctx.launch(run, { inspect: run.inspect ?? false }));
  try {
    return await runAgainst(ctx, service, run, hooks);
  } finally {
    if (target === undefined) await service.stop();
  }
}

/**
 * Variants of one transport in one scenario (bare vs browser headers, 10 vs 50 ev/s,
 * baseline vs throttled) on one fresh service: they compare latency and bytes, which a
 * shared process does not skew, and a start costs about 2 s on a pinned core. Runs that
 * compare service CPU or memory (steady, idle, overhead, scale steps) each get their own.
 */
export async function runVariants(
  ctx: RunContext,
  given: readonly { run: TransportRun; hooks?: RunHooks }[],
): Promise<RunResult[]> {
  if (given.length === 0) return [];
  const variants = given.map((v) => ({ ...v, run: inItsDomain(v.run) }));
  const target = targetOf(ctx, variants[0].run);
  const service = target ?? (await ctx.launch(variants[0].run, { inspect: false }));
  const out: RunResult[] = [];
  try {
    for (const v of variants) {
      if (ctx.aborted()) break;
      out.push(await runAgainst(ctx, service, v.run, v.hooks));
    }
  } finally {
    if (target === undefined) await service.stop();
  }
  return out;
}

/**
 * The running server a run uses, or undefined when it starts its own: always without a
 * target, for the overhead scenario's bare runs (the bare server is ours, not the
 * target), and for runs that need service environment when the target may be replaced.
 * A run in the payload domain uses the payload target when there is one; the bare
 * servers carry either domain, whichever the schedule asks for.
 */
export function targetOf(ctx: RunContext, run: TransportRun): RunningService | undefined {
  if (!ctx.target) return undefined;
  const server = run.server ?? ctx.server;
  if (server !== ctx.server) return undefined;
  const { STREAM_DOMAIN: domain, ...env } = run.env ?? {};
  if (ctx.launchForEnv === true && Object.keys(env).length > 0) return undefined;
  if (domain !== 'payload' || server !== 'nest' || ctx.launchForEnv !== true) return ctx.target;
  return ctx.payloadTarget;
}

/** Whether a run starts its own server (`targetOf` finds none for it). */
export function ownService(ctx: RunContext, run: TransportRun): boolean {
  return targetOf(ctx, run) === undefined;
}

export async function runAgainst(
  ctx: RunContext,
  service: RunningService,
  run: TransportRun,
  hooks: RunHooks = {},
): Promise<RunResult> {
  const label = `${run.scenario}${run.variant ? ` ${run.variant}` : ''} ${run.transport}`;
  if (run.proxy && run.endpoints) {
    throw new TypeError(
      `[${label}] a run goes through the proxy or spreads over endpoints, not both`,
    );
  }
  const token = ctx.token ?? service.token;
  const admin = service.control ?? new AdminClient(service, token);
  const prefix = `lt${++runCounter}`;
  const metrics = new RunMetrics();
  const firstMetrics = run.proxy?.only === 'first' ? new RunMetrics() : metrics;
  let proxy: TcpProxy | undefined;
  let batcher: ReadBatcher | undefined;
  let leanGrpc = false;
  let rawGrpc = false;
  let rawHttp2 = false;
  const connectors: Connector[] = [];
  const subscribers: Subscriber[] = [];
  const startedAt = performance.now();
  const publish = run.publish ?? true;
  const warmupS = publish ? (run.warmupS ?? 0) : 0;
  const serviceSampler = service.pid === undefined ? undefined : UsageSampler.forPid(service.pid);
  const generator = new GeneratorMonitor();
  const host = UsageSampler.host();
  // The server's core, whatever ran on it: its process and the kernel's work there.
  const serverCore =
    service.pinned && service.pid !== undefined ? new CoreWindow(SERVICE_CPU) : undefined;
  const helpers = (service.helperPids ?? []).map((pid) => UsageSampler.forPid(pid));
  let helperCpuPctAvg: number | undefined;
  const stopHelpers = (): void => {
    if (helpers.length === 0 || helperCpuPctAvg !== undefined) return;
    helperCpuPctAvg = helpers.reduce((sum, h) => sum + h.stop().cpuPctAvg, 0);
  };
  let error: string | undefined;
  let windowS = 0;
  let deliveredAtStart = 0;
  let requestsAtStart = 0;
  let lastSeqs = new Map<string, number>();
  let extra: Record<string, number | string | boolean> | undefined;
  let usage: UsageSummary | undefined;
  let genUsage: GeneratorUsage | undefined;
  let hostUsage: UsageSummary | undefined;
  let serverCoreUsage: CoreUsage | undefined;
  let windowStarted = false;
  let droppedAtStart = 0;
  // The server's heap allocation total (Node 26+) and GC totals at the window's start and end.
  let countersAtStart: WindowCounters | undefined;
  let countersAtEnd: WindowCounters | undefined;
  const windowCounters = async (): Promise<WindowCounters> => {
    const samples = (await admin.metrics().catch(() => undefined)) ?? [];
    return { allocated: promValue(samples, HEAP_ALLOCATED_METRIC), gc: gcTotals(samples) };
  };

  try {
    const base: ConnectorOptions = {
      host: service.host,
      httpPort: service.httpPort,
      httpsPort: service.httpsPort,
      grpcPort: service.grpcPort,
      token,
      headers: run.headers ?? 'bare',
      grpcSharedChannel: run.grpcSharedChannel ?? false,
      ...((run.server ?? ctx.server) === 'nchan' ? { peer: 'nchan' as const } : {}),
    };
    const direct = createConnector(run.transport, base);
    connectors.push(direct);
    // One connector per endpoint when the run spreads its subscribers (cluster).
    const spread = (run.endpoints ?? []).map((e) =>
      createConnector(run.transport, { ...base, ...e }),
    );
    connectors.push(...spread);
    let proxied = direct;
    if (run.proxy) {
      const targetPort =
        run.transport === 'grpc'
          ? service.grpcPort
          : run.transport.endsWith('-h2')
            ? service.httpsPort
            : service.httpPort;
      proxy = new TcpProxy({
        targetHost: service.host,
        targetPort,
        oneWayDelayMs: run.proxy.oneWayDelayMs ?? 0,
        downstreamBytesPerSec: run.throttleBytesPerSec,
      });
      const port = await proxy.listen();
      proxied = createConnector(run.transport, {
        ...base,
        httpPort: port,
        httpsPort: port,
        grpcPort: port,
      });
      connectors.push(proxied);
    }
    // The unsampled subscribers' connector, when they read cheaply: in batches (SSE over
    // HTTP/1.1, socket.io), or as data arrives through a client below the library: for
    // gRPC the raw one (the lean one over a shared channel), for HTTP/2 the raw getter.
    let unsampled = direct;
    const cheapUnsampled = (run.readBatchMs ?? 0) > 0 && !run.proxy && spread.length === 0;
    if (cheapUnsampled && readsInBatches(run.transport, base)) {
      batcher = new ReadBatcher(run.readBatchMs);
      unsampled = createConnector(run.transport, { ...base, readBatcher: batcher });
      connectors.push(unsampled);
    } else if (cheapUnsampled && readsLean(run.transport, base)) {
      leanGrpc = true;
      unsampled = createConnector(run.transport, { ...base, leanGrpc });
      // Recorded from the client made, not from the options that chose it.
      rawGrpc = unsampled instanceof RawGrpcConnector;
      connectors.push(unsampled);
    } else if (cheapUnsampled && readsRawHttp2(run.transport, base)) {
      rawHttp2 = true;
      unsampled = createConnector(run.transport, { ...base, rawHttp2 });
      connectors.push(unsampled);
    }

    const connectorOf = (j: number, sampled: boolean): Connector => {
      if (run.proxy && (run.proxy.only !== 'first' || j === 0)) return proxied;
      if (spread.length > 0) return spread[j % spread.length];
      return sampled ? direct : unsampled;
    };

    const orders = Math.min(run.orders ?? run.subscribers, run.subscribers);
    const stride = latencySampleStride(run.subscribers, orders);
    await admin.prepare({
      orders,
      ratePerOrder: run.ratePerOrder,
      payloadBytes: run.payloadBytes,
      domain: domainOf(run),
      prefix,
    });

    const live: LiveRun = { run, service, admin, subscribers, metrics, firstMetrics, proxy };
    // Subscribers start at seq 0 and get the `created` event replayed: that confirms the
    // stream on every transport. Wait for those replays so they are not counted as load.
    const replaysArrived = (): Promise<boolean> =>
      waitFor(() => subscribers.every((s) => s.tracker.highestSeq >= 1), CONNECT_BATCH_TIMEOUT_MS);
    await hooks.beforeConnect?.(live);
    const pauses = hooks.connectPauses;
    for (let i = 0; i < run.subscribers && !ctx.aborted();) {
      const nextPause = Math.min(...(pauses?.at ?? []).filter((p) => p > i));
      const end = Math.min(i + CONNECT_BATCH, run.subscribers, nextPause);
      const batch: Subscriber[] = [];
      for (let j = i; j < end; j += 1) {
        // Subscriber 0 is always sampled (it alone may go through the proxy).
        const sampled = j % stride === 0;
        const sub = new Subscriber(
          orderId(prefix, (j % orders) + 1),
          0,
          connectorOf(j, sampled),
          j === 0 ? firstMetrics : metrics,
          {
            reconnect: run.reconnect ?? true,
            measureLatency: sampled,
            ...hooks.subscriberOptions?.(j),
          },
        );
        subscribers.push(sub);
        batch.push(sub);
        sub.start();
      }
      const ok = await withTimeout(
        Promise.all(batch.map((s) => s.ready())),
        CONNECT_BATCH_TIMEOUT_MS,
      );
      const connected = subscribers.filter((s) => s.connected).length;
      ctx.progress(`[${label}] connecting ${connected}/${run.subscribers}`);
      if (ok === undefined) {
        throw new Error(
          `only ${connected}/${run.subscribers} subscribers connected within ${CONNECT_BATCH_TIMEOUT_MS} ms`,
        );
      }
      i = end;
      if (pauses && end === nextPause && end < run.subscribers) {
        await replaysArrived();
        await pauses.run(live);
      }
    }
    await replaysArrived();

    await hooks.beforeStart?.(live);
    // Read before any warm-up, so the reference drop count spans the same events as the
    // clients' seq checks.
    droppedAtStart = droppedEvents(await admin.metrics()) ?? 0;
    if (warmupS > 0) {
      await admin.start();
      ctx.progress(`[${label}] warming up ${warmupS}s`);
      await new Promise((r) => setTimeout(r, warmupS * 1000));
    }
    if (!run.countSetupBytes) proxy?.resetCounts();
    deliveredAtStart = metrics.delivered + (firstMetrics === metrics ? 0 : firstMetrics.delivered);
    requestsAtStart = connectors.reduce((a, c) => a + c.requests, 0);
    countersAtStart = await windowCounters();
    metrics.measureFromUs = firstMetrics.measureFromUs = epochUs();
    serviceSampler?.start();
    for (const h of helpers) h.start();
    generator.start();
    host.start();
    serverCore?.begin();
    windowStarted = true;
    const windowStart = performance.now();
    if (publish && warmupS === 0) await admin.start();

    for (let t = 1; t <= run.durationS && !ctx.aborted(); t += 1) {
      await new Promise((r) =>
        setTimeout(r, Math.max(0, windowStart + t * PROGRESS_INTERVAL_MS - performance.now())),
      );
      hooks.tick?.(live, t);
      const lat = metrics.latency.summary();
      const svc = service.pid === undefined ? '' : ` svc ${sampleText(serviceSampler)}`;
      ctx.progress(
        `[${label}] ${t}/${run.durationS}s subs ${subscribers.filter((s) => s.connected).length}/${run.subscribers} ` +
          `events ${metrics.delivered - deliveredAtStart} p99 ${lat.p99Ms}ms${svc} errors ${metrics.errors.total}`,
      );
    }
    metrics.measureToUs = firstMetrics.measureToUs = epochUs();
    if (publish) await admin.stop();
    windowS = (performance.now() - windowStart) / 1000;
    // Service, generator and host over the same window (the publishing one); the
    // teardown of thousands of subscribers afterwards is not load.
    usage = serviceSampler?.stop();
    stopHelpers();
    genUsage = generator.stop();
    hostUsage = host.stop();
    serverCoreUsage = serverCore?.end();
    countersAtEnd = await windowCounters();

    lastSeqs = await admin.lastSeqs([...new Set(subscribers.map((s) => s.orderId))]);
    await waitFor(
      () => subscribers.every((s) => s.tracker.highestSeq >= (lastSeqs.get(s.orderId) ?? 0)),
      run.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS,
    );
    extra = await hooks.afterDrain?.(live);
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  } finally {
    batcher?.stop();
    for (const s of subscribers) s.stop();
  }

  usage ??= serviceSampler?.stop();
  stopHelpers();
  genUsage ??= generator.stop();
  // A run that failed before its window started has no host figures (nothing to compare).
  if (windowStarted) {
    hostUsage ??= host.stop();
    serverCoreUsage ??= serverCore?.end();
  }
  const otherCpuPctAvg = hostUsage
    ? Math.max(
        0,
        Math.round(
          (hostUsage.cpuPctAvg -
            (usage?.cpuPctAvg ?? 0) -
            (helperCpuPctAvg ?? 0) -
            genUsage.cpuPctAvg) *
            10,
        ) / 10,
      )
    : 0;
  const promSamples = await admin.metrics().catch(() => undefined);
  await Promise.all(connectors.map((c) => c.close()));
  await proxy?.close();

  const counts: SeqCounts[] = subscribers
    .filter((_, i) => firstMetrics === metrics || i > 0)
    .map((s) => s.tracker.counts(lastSeqs.get(s.orderId) ?? s.tracker.highestSeq));
  const total = sumCounts(counts);
  // The service's own drop counter, for reference: loss is judged on what clients were
  // told (skipped items, resets), never by subtracting a server-side total.
  const droppedByService = Math.max(0, (droppedEvents(promSamples) ?? 0) - droppedAtStart);
  const expected = subscribers
    .filter((_, i) => firstMetrics === metrics || i > 0)
    .reduce((a, s) => a + (lastSeqs.get(s.orderId) ?? s.tracker.highestSeq), 0);
  // What the server delivered in the window (by publish time): the denominator of its
  // CPU and heap per event.
  const deliveredInWindow =
    metrics.deliveredInWindow + (firstMetrics === metrics ? 0 : firstMetrics.deliveredInWindow);
  // What crossed the wire from the window's start to the end of the drain, as the proxy
  // counts bytes.
  const receivedSinceStart =
    metrics.delivered + (firstMetrics === metrics ? 0 : firstMetrics.delivered) - deliveredAtStart;
  const requests = connectors.reduce((a, c) => a + c.requests, 0) - requestsAtStart;
  const wireEvents =
    run.proxy?.only === 'first'
      ? firstMetrics.delivered
      : run.countSetupBytes
        ? receivedSinceStart + deliveredAtStart
        : receivedSinceStart;
  const lagSeconds = promSamples
    ? promValue(promSamples, 'nodejs_eventloop_lag_p99_seconds')
    : undefined;
  const serverMetrics = promSamples
    ? Object.fromEntries(
        (
          [
            ['queueOverflows', 'order_queue_overflows_total'],
            ['droppedEvents', 'order_queue_dropped_events_total'],
            ['deliveries', 'order_deliveries_total'],
            ['busSubscribers', 'order_bus_subscribers'],
            ['rssBytes', 'process_resident_memory_bytes'],
          ] as const
        ).flatMap(([k, name]) => {
          const v = promValue(promSamples, name);
          return v === undefined ? [] : [[k, v]];
        }),
      )
    : undefined;

  const result: RunResult = {
    scenario: run.scenario,
    variant: run.variant,
    transport: run.transport,
    server: run.server ?? ctx.server,
    settings: {
      subscribers: run.subscribers,
      ratePerOrder: run.ratePerOrder,
      durationS: run.durationS,
      warmupS,
      payloadBytes: run.payloadBytes,
      headers: run.headers ?? 'bare',
      oneWayDelayMs: run.proxy?.oneWayDelayMs ?? 0,
      grpcSharedChannel: run.grpcSharedChannel ?? false,
      env: { ...run.env },
      ...(batcher ? { readBatchMs: batcher.everyMs } : {}),
      ...(leanGrpc ? { leanGrpc } : {}),
      ...(rawGrpc ? { rawGrpc } : {}),
      ...(rawHttp2 ? { rawHttp2 } : {}),
    },
    ok: error === undefined,
    ...(error === undefined ? {} : { error }),
    durationS: Math.round((performance.now() - startedAt) / 100) / 10,
    latency: metrics.latency.summary(),
    events: eventCounts(total, {
      expected,
      droppedByService,
      perSec: windowS > 0 ? Math.round(deliveredInWindow / windowS) : 0,
      expectedPerSec: run.subscribers * run.ratePerOrder,
    }),
    service: serviceUsage(service, usage, {
      cpuMsPer1kEvents:
        usage && deliveredInWindow > 0
          ? Math.round((usage.cpuMsTotal / deliveredInWindow) * 1000 * 100) / 100
          : null,
      eventLoopLagP99Ms: lagSeconds === undefined ? null : Math.round(lagSeconds * 1e5) / 100,
      heapBytesPerEvent:
        countersAtStart?.allocated !== undefined &&
        countersAtEnd?.allocated !== undefined &&
        deliveredInWindow > 0
          ? Math.round((countersAtEnd.allocated - countersAtStart.allocated) / deliveredInWindow)
          : null,
      gc: gcOver(countersAtStart?.gc, countersAtEnd?.gc, windowS),
    }),
    generator: {
      cpuPctAvg: genUsage.cpuPctAvg,
      eventLoopDelayP99Ms: genUsage.eventLoopDelayP99Ms,
      // The helpers (Nchan's publisher) share the generator's core.
      saturated:
        genUsage.saturated ||
        genUsage.cpuPctAvg + (helperCpuPctAvg ?? 0) >= GENERATOR_SATURATED_CPU_PCT,
    },
    ...(hostUsage
      ? {
          host: {
            cpuPctAvg: hostUsage.cpuPctAvg,
            otherCpuPctAvg,
            busy: otherCpuPctAvg >= HOST_BUSY_OTHER_CPU_PCT,
            ...(helperCpuPctAvg !== undefined
              ? { helperCpuPctAvg: Math.round(helperCpuPctAvg * 10) / 10 }
              : {}),
            ...(serverCoreUsage ? { serverCore: serverCoreUsage } : {}),
          },
        }
      : {}),
    ...(proxy
      ? {
          wire: {
            up: proxy.bytes.up,
            down: proxy.bytes.down,
            perEvent:
              wireEvents > 0
                ? Math.round(((proxy.bytes.up + proxy.bytes.down) / wireEvents) * 10) / 10
                : 0,
            downPerEvent:
              wireEvents > 0 ? Math.round((proxy.bytes.down / wireEvents) * 10) / 10 : 0,
          },
        }
      : {}),
    requestsPerSec: windowS > 0 ? Math.round((requests / windowS) * 10) / 10 : 0,
    connectMs: distribution(metrics.connectMs),
    reconnectMs: distribution(metrics.reconnectMs),
    errors: metrics.errors.toJSON(),
    ends: metrics.ends.toJSON(),
    ...(serverMetrics ? { serverMetrics } : {}),
    ...(extra ? { extra } : {}),
  };
  ctx.progress(`[${label}] ${summaryLine(result)}`, true);
  return result;
}

function droppedEvents(samples: readonly PromSample[] | undefined): number | undefined {
  return samples ? promValue(samples, 'order_queue_dropped_events_total') : undefined;
}

function sampleText(sampler: UsageSampler | undefined): string {
  const last = sampler?.last();
  return last ? `cpu ${last.cpuPct}% rss ${mb(last.rssBytes)}` : '';
}

export function summaryLine(r: RunResult): string {
  const e = r.events;
  return (
    `${r.ok ? 'done' : `FAILED (${r.error})`}: ${e.perSec}/${e.expectedPerSec} ev/s, p50 ${r.latency.p50Ms} ` +
    `p99 ${r.latency.p99Ms} max ${r.latency.maxMs} ms, lost ${e.lost} dup ${e.duplicates} ooo ${e.outOfOrder}` +
    `${(e.skipped ?? 0) > 0 ? ` skipped (signalled) ${e.skipped ?? 0}` : ''}, ` +
    `svc cpu ${r.service.cpuPctAvg}%${r.generator.saturated ? ' [GENERATOR SATURATED]' : ''}` +
    `${r.host?.busy ? ` [HOST BUSY: others ${r.host.otherCpuPctAvg}%]` : ''}`
  );
}
