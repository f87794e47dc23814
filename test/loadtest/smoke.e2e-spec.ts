import { existsSync } from 'node:fs';
import { heapAllocatedBytes } from '../../apps/order-status/src/ops/metrics.service';
import { bareServerCommand } from '../../loadtest/src/bare-server/bare-command';
import { writeOutputs } from '../../loadtest/src/cli';
import type { TransportName } from '../../loadtest/src/clients/transport';
import { htmlReport } from '../../loadtest/src/report/html';
import { markdownReport } from '../../loadtest/src/report/markdown';
import { nchanAvailable } from '../../loadtest/src/nchan/nchan-server';
import { clusterUnavailable } from '../../loadtest/src/scenarios/cluster';
import { isStreaming } from '../../loadtest/src/scenarios/scenario';
import {
  canPin,
  launchService,
  SERVICE_CPU,
  SERVICE_ENTRY,
  type RunningService,
} from '../../loadtest/src/service/launcher';
import { runnableRungs } from '../../loadtest/src/ladder/rungs';
import { SCENARIOS } from '../../loadtest/src/scenarios/registry';
import { DEFAULT_SUITE, runSuite } from '../../loadtest/src/suite';

/**
 * Every scenario at tiny size (seconds each) against the built
 * service (`npm test` builds dist/ before jest runs), asserting a complete report and no
 * loss, duplicates or reordering anywhere. `LOADTEST_SMOKE_SERVER=bare` runs it against
 * the bare server instead (checks the load test alone; reconnect needs the service's
 * maximum stream age and is skipped there).
 *
 * The scenarios run in two halves side by side, each half's runs one after the other on
 * a service shared by the half (distinct order ids per run; a start per run would cost
 * more than the runs), except the runs that need their own: reconnect (the service
 * started with STREAM_MAX_AGE_MS), overhead's bare-server half, and cluster (its own
 * local stack: redis-server, two instances, nginx; about 17 s, skipped with the reason
 * printed when redis-server or nginx is missing, and on the bare server).
 */
const SMOKE_TRANSPORTS: TransportName[] = ['grpc', 'sse', 'ws', 'longpoll'];
/**
 * The ladder starts a server per rung (the service's each with its own
 * BENCHMARK_LAYERS_OFF): one transport and the smoke's three rungs keep it near 15 s; the
 * framework floors run in overhead's smoke.
 */
const LADDER_SMOKE_TRANSPORTS: TransportName[] = ['sse'];
/**
 * The CI budget is about 3 minutes on 2 cores: the main test takes about 1 min 40 s alone
 * in its two halves (2 min 40 s in series), Nchan runs and cluster included.
 */
const SMOKE_TIMEOUT_MS = 250_000;

/**
 * The scenarios of the first of the two halves that run side by side (the rest make the
 * second; about the same time each). overhead and broadcast, which each start Nchan and
 * the bare servers, share the second, so only one of each runs at a time.
 */
const FIRST_HALF = new Set([
  'steady',
  'idle',
  'bytes',
  'wan',
  'slow-consumer',
  'backpressure',
  'unary',
]);

/**
 * Scenarios whose runs each start (or share) a server of their domain: a payload size
 * puts them in the payload domain (hostile's are checked in its own test; cluster's stack
 * runs in it, every run with a payload size).
 */
const RUNS_IN_THEIR_DOMAIN = new Set([
  'steady',
  'bytes',
  'wan',
  'slow-consumer',
  'backpressure',
  'reconnect',
  'overhead',
  'ladder',
  'broadcast',
  'scale',
  'cluster',
]);

/** Scenarios whose every subscriber follows an order published at the run's rate. */
const PUBLISHED_AT_RATE = new Set(['steady', 'wan', 'overhead', 'ladder', 'broadcast', 'scale']);

const server: 'nest' | 'bare' = process.env.LOADTEST_SMOKE_SERVER === 'bare' ? 'bare' : 'nest';

const noCluster = server === 'bare' ? 'the bare server has no cluster' : clusterUnavailable();
if (noCluster !== undefined) {
  process.stderr.write(`SKIPPED load test smoke, cluster scenario: ${noCluster}\n`);
}
const nchan = nchanAvailable();
// The smoke's servers run on this Node, whose V8 may or may not report its allocation total.
const heapAllocationReported = heapAllocatedBytes() !== undefined;
if (!nchan.ok) {
  process.stderr.write(`SKIPPED load test smoke, Nchan runs: ${nchan.reason}\n`);
}

/** Set by .ci/run in one of its two Jest runs: the smoke's minutes of CPU, spent once. */
const SMOKE_ELSEWHERE_VARIABLE = 'LOADTEST_SMOKE_ELSEWHERE';
const elsewhere = process.env[SMOKE_ELSEWHERE_VARIABLE] === '1';
if (elsewhere) {
  process.stderr.write(
    `SKIPPED load test smoke: ${SMOKE_ELSEWHERE_VARIABLE}=1 (.ci/run runs it in its other Jest run)\n`,
  );
}

(elsewhere ? describe.skip : describe)(`load test smoke against the ${server} server`, () => {
  jest.setTimeout(SMOKE_TIMEOUT_MS);

  let running: RunningService | undefined;
  let second: RunningService | undefined;
  /** Each half's service in the payload domain, for its payload-size runs (nest only). */
  let payloads: (RunningService | undefined)[] = [];
  afterEach(async () => {
    await Promise.all([running?.stop(), second?.stop(), ...payloads.map((p) => p?.stop())]);
    running = second = undefined;
    payloads = [];
  });

  it('runs every scenario tiny with no loss, duplicates or reordering', async () => {
    if (server === 'nest' && !existsSync(SERVICE_ENTRY)) {
      throw new Error(`${SERVICE_ENTRY} is missing: run \`npm run build\` first`);
    }
    const launch = (): Promise<RunningService> =>
      launchService(server === 'bare' ? { command: bareServerCommand('sse') } : { inspect: true });
    // The bare server carries whichever domain a schedule asks for; the service one.
    const launchPayload = (): Promise<RunningService> =>
      launchService({ inspect: true, env: { STREAM_DOMAIN: 'payload' } });
    const launches = [launch(), launch(), ...(server === 'nest' ? [0, 1].map(launchPayload) : [])];
    // Settled, not Promise.all: if one fails to start, afterEach still stops the others.
    const started = await Promise.allSettled(launches);
    [running, second, ...payloads] = started.map((r) =>
      r.status === 'fulfilled' ? r.value : undefined,
    );
    for (const r of started) if (r.status === 'rejected') throw r.reason;
    if (running === undefined || second === undefined) throw new Error('a service did not start');
    // Every scenario (the default suite's and scale), each on the smoke transports.
    // hostile starts its own services and attacks them, cluster-failover its own cluster
    // and instances: each has its own test below; soak runs a minute in its own spec.
    const OWN_TESTS = new Set(['hostile', 'cluster-failover', 'soak']);
    const steps = SCENARIOS.filter((s) => !OWN_TESTS.has(s.name))
      // reconnect and the ladder start the service with their own environment.
      .filter((s) => server === 'nest' || (s.name !== 'reconnect' && s.name !== 'ladder'))
      // routing needs only redis-server, which the cluster check covers.
      .filter((s) => noCluster === undefined || (s.name !== 'cluster' && s.name !== 'routing'))
      .map((s) => ({
        scenario: s.name,
        options: { transports: s.name === 'ladder' ? LADDER_SMOKE_TRANSPORTS : SMOKE_TRANSPORTS },
      }));
    // Two halves of the scenarios at once, each on a service of its own (a service has one
    // simulator, whose schedule each run sets): tiny runs mostly wait (windows, the proxy's
    // delay, reconnects), so in series they took over 3 minutes of each CI run. Each half
    // is a suite with `running` set, so neither pins this process.
    const halves: [RunningService, RunningService | undefined, typeof steps][] = [
      [running, payloads[0], steps.filter((s) => FIRST_HALF.has(s.scenario))],
      [second, payloads[1], steps.filter((s) => !FIRST_HALF.has(s.scenario))],
    ];
    const [first, ...rest] = await Promise.all(
      halves.map(([service, payloadService, half]) =>
        runSuite({
          running: service,
          runningPayload: payloadService,
          steps: half,
          transports: SMOKE_TRANSPORTS,
          overrides: {},
          tiny: true,
          server,
          argv: ['--tiny'],
          progress: () => undefined,
        }),
      ),
    );
    const report = {
      ...first,
      settings: { ...first.settings, scenarios: steps.map((s) => s.scenario) },
      runs: [first, ...rest].flatMap((r) => r.runs),
      aborted: [first, ...rest].flatMap((r) => r.aborted ?? []),
    };

    // LOADTEST_SMOKE_OUT=dir keeps the smoke report (results.json, report.md, report.html).
    if (process.env.LOADTEST_SMOKE_OUT) writeOutputs(process.env.LOADTEST_SMOKE_OUT, report);

    // A scenario that aborted says why here, before its missing runs are counted.
    expect(report.aborted).toEqual([]);
    const scenarios = new Set(report.runs.map((r) => r.scenario));
    for (const s of steps) expect(scenarios).toContain(s.scenario);
    for (const s of DEFAULT_SUITE) expect(steps.map((x) => x.scenario)).toContain(s.scenario);
    for (const r of report.runs) {
      const where = `${r.scenario} ${r.variant} ${r.transport} (${r.server})`;
      expect({ where, ok: r.ok, error: r.error }).toEqual({ where, ok: true, error: undefined });
      expect({
        where,
        lost: r.events.lost,
        dup: r.events.duplicates,
        ooo: r.events.outOfOrder,
      }).toEqual({ where, lost: 0, dup: 0, ooo: 0 });
    }
    // Payload-size runs carried the load test's own event wherever it is served.
    for (const r of report.runs.filter((x) => RUNS_IN_THEIR_DOMAIN.has(x.scenario))) {
      const where = `${r.scenario} ${r.variant} ${r.transport} (${r.server})`;
      const payload = r.settings.payloadBytes > 0;
      expect({ where, domain: r.settings.env.STREAM_DOMAIN }).toEqual({
        where,
        domain: payload ? 'payload' : undefined,
      });
    }
    // Each run's orders were published through its window: at least half the events its
    // rate and length ask for reached its subscribers (two runs sharing a simulator would
    // overwrite each other's schedule, and counting against the last seq would not show it).
    for (const r of report.runs.filter((x) => PUBLISHED_AT_RATE.has(x.scenario))) {
      const where = `${r.scenario} ${r.variant} ${r.transport} (${r.server})`;
      const { subscribers, ratePerOrder, durationS } = r.settings;
      const asked = subscribers * ratePerOrder * durationS;
      expect({ where, published: r.events.delivered >= asked / 2 }).toEqual({
        where,
        published: true,
      });
    }
    // The service ended streams itself (max age) and every subscriber resumed cleanly.
    for (const r of report.runs.filter((x) => x.scenario === 'reconnect')) {
      if (isStreaming(r.transport))
        expect({ t: r.transport, ends: r.ends.max_age > 0 }).toEqual({
          t: r.transport,
          ends: true,
        });
      expect(r.reconnectMs.count).toBeGreaterThan(0);
    }
    // The cluster ran on Redis, both instances delivered (direct: half the subscribers on
    // the instance that does not publish), and the simulator never failed a publish.
    for (const r of report.runs.filter((x) => x.scenario === 'cluster')) {
      const where = `cluster ${r.variant} ${r.transport}`;
      // Per-order routing: the instance without subscribers receives nothing.
      if (r.variant.startsWith('idle-instance')) {
        expect({ where, ingested: r.extra?.app2IngestedEvents }).toEqual({ where, ingested: 0 });
      }
      expect({ where, store: r.extra?.store, failed: r.extra?.simulatorFailed }).toEqual({
        where,
        store: 'redis',
        failed: 0,
      });
      if (r.variant === 'direct') {
        expect({ where, app2: Number(r.extra?.app2Delivered) > 0 }).toEqual({ where, app2: true });
      }
    }
    // The comparisons ran every server they name: Nchan when it is installed, and in the
    // overhead scenario the framework floors (Fastify, NestJS on Fastify) for long-poll.
    const peers = nchan.ok ? ['nest', 'bare', 'nchan'] : ['nest', 'bare'];
    const serversOf = (scenario: string, transport?: string): string[] => [
      ...new Set(
        report.runs
          .filter((r) => r.scenario === scenario)
          .filter((r) => transport === undefined || r.transport === transport)
          .map((r) => r.server),
      ),
    ];
    for (const scenario of ['overhead', 'broadcast']) {
      expect({ scenario, servers: serversOf(scenario) }).toEqual({
        scenario,
        servers: expect.arrayContaining(peers),
      });
      const longPoll = serversOf(scenario, 'longpoll');
      const floors = ['fastify', 'floor'].filter((f) => longPoll.includes(f));
      expect({ scenario, floors }).toEqual({
        scenario,
        floors: scenario === 'overhead' ? ['fastify', 'floor'] : [],
      });
    }
    // Idle memory is read after forced GCs, as RSS and as the JS heap in use, from an
    // empty service and at plateaus with exactly each eighth connected (the connect loop
    // splits its batch there: the smoke's 5 subscribers are one batch otherwise) and all,
    // whose stretches give the marginal figures.
    for (const r of report.runs.filter((x) => x.scenario === 'idle')) {
      const where = `idle ${r.transport}`;
      expect({
        where,
        gc: r.extra?.gcForced,
        heap: typeof r.extra?.heapPerConnectionKB,
        plateaus: r.extra?.plateaus,
        marginal: [typeof r.extra?.rssMarginalKB, typeof r.extra?.heapMarginalKB],
      }).toEqual({
        where,
        gc: true,
        heap: 'number',
        plateaus: '0/1/2/3/4/5',
        marginal: ['number', 'number'],
      });
    }
    // Nchan's publisher (its own process on the generator's core) is sampled in every Nchan
    // run, so its CPU is reported and not counted as others' work on the host.
    for (const r of report.runs.filter((x) => x.server === 'nchan')) {
      const where = `${r.scenario} ${r.transport} (nchan)`;
      expect({ where, publisher: typeof r.host?.helperCpuPctAvg }).toEqual({
        where,
        publisher: 'number',
      });
    }
    // Where the runtime reports V8's allocation total (Node 26), the service and the bare
    // server both give their heap bytes per delivery.
    if (heapAllocationReported) {
      for (const r of report.runs.filter(
        (x) => x.scenario === 'overhead' && x.server !== 'nchan',
      )) {
        const where = `overhead ${r.transport} (${r.server})`;
        expect({ where, heap: Number(r.service.heapBytesPerEvent) > 0 }).toEqual({
          where,
          heap: true,
        });
      }
    }
    // Every Node server (the service, bare Node, the framework floors) reports its garbage
    // collections over the window from its GC histogram; Nchan has none.
    for (const r of report.runs.filter((x) => x.scenario === 'overhead')) {
      const where = `overhead ${r.transport} (${r.server})`;
      const gc = r.service.gc;
      expect({
        where,
        gc:
          gc === null || gc === undefined
            ? gc
            : [typeof gc.pauseMsPerS, gc.collections >= 0, gc.majorCollections >= 0],
      }).toEqual({ where, gc: r.server === 'nchan' ? null : ['number', true, true] });
    }
    // Each server the overhead scenario starts is pinned to its core where the host has
    // two, and the run reads that core over its window: busy at least with the server's
    // own CPU (the rest is the kernel's work there, or others').
    if (canPin()) {
      for (const r of report.runs.filter((x) => x.scenario === 'overhead')) {
        const where = `overhead ${r.transport} (${r.server})`;
        const core = r.host?.serverCore;
        expect({
          where,
          core: core?.core,
          covers: core !== undefined && core.busyPct + 10 >= r.service.cpuPctAvg,
        }).toEqual({ where, core: SERVICE_CPU, covers: true });
      }
    }
    // The ladder climbed its smoke rungs (bottom, every layer off, the full stack), each
    // service rung on its own switches, and reports what each added.
    if (server === 'nest') {
      const ladder = report.runs.filter((r) => r.scenario === 'ladder');
      expect(ladder.map((r) => [r.extra?.rung, r.settings.env.BENCHMARK_LAYERS_OFF])).toEqual(
        runnableRungs('sse', true).map((g) => [g.id, g.env?.BENCHMARK_LAYERS_OFF]),
      );
      // The top rung (the full stack, tracing included) has its figure from its one round.
      const top = (runnableRungs('sse', true).at(-1)?.label ?? '').replace(
        /[.*+?^${}()|[\]\\]/g,
        '\\$&',
      );
      expect(markdownReport(report)).toMatch(new RegExp(`\\| sse \\| ${top} \\| .* \\| 1 \\| \\d`));
      expect(htmlReport(report)).toContain('id="ladder"');
    }
    expect(markdownReport(report)).toContain('## steady');
    expect(htmlReport(report)).toContain('new Chart(');
  });

  // The hostile scenario at tiny size: the service lives through every attacker, the
  // canaries lose nothing, and slots and gauges are back at 0 before SIGTERM, which is
  // prompt (the service, not the launcher's SIGKILL, ends it).
  it('hostile: the canaries lose nothing and the service recovers fully', async () => {
    if (server === 'bare') return; // the attacks need the service's routes and /metrics
    const report = await runSuite({
      steps: [{ scenario: 'hostile', options: {} }],
      transports: ['grpc', 'sse', 'sse-h2', 'ws', 'longpoll'],
      overrides: {},
      tiny: true,
      server,
      argv: ['hostile', '--tiny'],
      progress: () => undefined,
    });
    const storm = report.runs.filter((r) => r.variant === 'storm');
    expect(storm.map((r) => r.transport).sort()).toEqual([
      'grpc',
      'longpoll',
      'sse',
      'sse-h2',
      'ws',
    ]);
    for (const r of report.runs) {
      const where = `hostile ${r.variant} ${r.transport}`;
      expect({
        where,
        ok: r.ok,
        error: r.error,
        lost: r.events.lost,
        dup: r.events.duplicates,
      }).toEqual({ where, ok: true, error: undefined, lost: 0, dup: 0 });
      // The padded stream and the canaries' are the load test's own events.
      expect({ where, domain: r.settings.env.STREAM_DOMAIN }).toEqual({ where, domain: 'payload' });
      expect({
        where,
        alive: r.extra?.serviceAlive,
        connections: r.extra?.connectionsAfter,
        subscribers: r.extra?.busSubscribersAfter,
        exit: r.extra?.exit,
      }).toEqual({ where, alive: true, connections: 0, subscribers: 0, exit: 'code 0' });
    }
    // Every attacker really ran.
    const extra = storm[0].extra ?? {};
    for (const key of ['stalled_opened', 'h2cancel_cancelled', 'storm_cycles', 'paddedPublished'])
      expect({ key, ran: Number(extra[key]) > 0 }).toEqual({ key, ran: true });
    expect(markdownReport(report)).toContain('## hostile');
  });

  // The Redis Cluster failover run at tiny size: a clean failover and a killed master
  // (made lossy) while two instances stream to every transport: no silent loss, no
  // duplicate, an explicit reset exactly for the killed shard's subscribers.
  it('cluster-failover: no loss or duplicate; resets only where Redis lost events', async () => {
    if (noCluster !== undefined) return;
    const transports: TransportName[] = ['grpc', 'sse', 'ws', 'longpoll'];
    const report = await runSuite({
      steps: [{ scenario: 'cluster-failover', options: {} }],
      transports,
      overrides: {},
      tiny: true,
      server,
      argv: ['cluster-failover', '--tiny'],
      progress: () => undefined,
    });
    expect(report.runs.map((r) => r.transport).sort()).toEqual([...transports].sort());
    for (const r of report.runs) {
      const e = r.extra ?? {};
      expect({
        t: r.transport,
        ok: r.ok,
        error: r.error,
        lost: r.events.lost,
        dup: r.events.duplicates,
        cleanResets: e.failoverResetSubscribers,
        killedShardResets: Number(e.killResetSubscribers) > 0,
        recovered: typeof e.killRecoveryMs === 'number',
      }).toEqual({
        t: r.transport,
        ok: true,
        error: undefined,
        lost: 0,
        dup: 0,
        cleanResets: 0,
        killedShardResets: true,
        recovered: true,
      });
    }
  });
});
