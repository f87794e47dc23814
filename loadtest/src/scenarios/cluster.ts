import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  startLocalStack,
  type LocalStack,
  type RunningInstance,
} from '../../../deploy/stack/local-stack';
import { promValue } from '../sampling/prom-text';
import { UsageSampler } from '../sampling/sampler';
import { AdminClient } from '../service/admin';
import { BANNER_TIMEOUT_MS, type RunningService } from '../service/launcher';
import { idleInstancePhase } from './cluster-idle';
import type { RunResult } from './result';
import { runAgainst, waitFor, type RunHooks } from './run-transport';
import type { RunContext, SubscriberEndpoint, TransportRun } from './run-options';
import { anyTransport, type Scenario, type ScenarioOptions } from './scenario';
import { defaultPayloadBytes } from './steady';

/** The repository root: the stack runs its dist/ build and renders its nginx template. */
export const REPO_ROOT = resolve(__dirname, '../../..');

/**
 * The local stack's nginx runs one worker with 1,024 connections, and a proxied stream
 * holds two (client and upstream): above this the proxy, not the service, would refuse.
 */
export const CLUSTER_MAX_SUBSCRIBERS = 400;

/** Variables for both instances on top of the stack's own. */
export const CLUSTER_STACK_ENV: Readonly<Record<string, string>> = {
  LOG_LEVEL: 'warn',
  // The load test drives app1's simulator through the admin API; the stack's demo
  // schedule (20 orders) would be load nobody counts.
  SIMULATOR_ENABLED: 'false',
  // Every subscriber uses the one demo token (one principal): lift the per-principal cap,
  // as the launcher does for a single service.
  LIMIT_CONNECTIONS_PER_PRINCIPAL: '0',
  // The load test's own event (libs/payload-domain): its size is a setting of the run,
  // not a field of the public order contract.
  STREAM_DOMAIN: 'payload',
};

/** Why the cluster cannot run on this host (a missing binary or build), or undefined. */
export function clusterUnavailable(root = REPO_ROOT): string | undefined {
  const binaries: [string, string[]][] = [
    ['redis-server', ['--version']],
    ['nginx', ['-v']],
  ];
  for (const [bin, args] of binaries) {
    try {
      execFileSync(bin, args, { stdio: 'ignore' });
    } catch {
      return `${bin} is not installed (apt-get install -y redis-server nginx-light)`;
    }
  }
  const main = join(root, 'dist/apps/order-status/main.js');
  if (!existsSync(main)) return `${main} is missing: run \`npm run build\` first`;
  return undefined;
}

/**
 * Both instances of the stack serve the one Redis data set, so events published on app1
 * (its simulator) reach subscribers on app2 through Redis pub/sub; the events are the
 * load test's own (the payload domain), as large as the steady runs'. Two ways to spread
 * the subscribers, one run each:
 * - `nginx`: every subscriber through the stack's nginx (the deployment's path: TLS gRPC,
 *   HTTP/1.1 and HTTP/2); nginx picks the instance. Round robin for HTTP and gRPC, but
 *   socket.io's upstream is `ip_hash`, so on loopback (one client address) every ws
 *   subscriber lands on one instance.
 * - `direct`: subscriber i to instance i % 2 on its own ports: an exact half on the
 *   instance that does not publish, whatever nginx would choose; the instances' own TLS
 *   port is unknown (HTTPS_PORT=0), so the -h2 transports run through nginx only.
 * Per-instance subscriptions, deliveries, drops and CPU go into `extra`, so the spread is
 * measured, not assumed.
 */
export const cluster: Scenario = {
  name: 'cluster',
  description: 'Redis stack: subscribers on both instances (nginx / direct), simulator on app1',
  supports: anyTransport,
  run: async (ctx, o) => {
    const why = clusterUnavailable();
    if (why !== undefined) throw new Error(`cluster needs the local stack: ${why}`);
    if (ctx.target && !ctx.launchForEnv) {
      ctx.progress('[cluster] note: --target is not used; the scenario starts its own stack', true);
    }
    const tail: string[] = [];
    let bannerToken: string | undefined;
    let stack: LocalStack;
    try {
      stack = await startLocalStack({
        rootDir: REPO_ROOT,
        freePorts: true,
        env: CLUSTER_STACK_ENV,
        log: (source, line) => {
          // The instances' start-up banner carries the demo token (the stack's public demo
          // secret, shared by both instances), as a single service's does for the launcher.
          bannerToken ??= /^\s*export TOKEN=(\S+)/.exec(line)?.[1];
          tail.push(`[${source}] ${line}`);
          if (tail.length > 30) tail.shift();
        },
      });
    } catch (err) {
      throw new Error(`stack did not start: ${String(err)}\n${tail.join('\n')}`);
    }
    try {
      await waitFor(() => ctx.token !== undefined || bannerToken !== undefined, BANNER_TIMEOUT_MS);
      const token = ctx.token ?? bannerToken;
      if (token === undefined) throw new Error('no demo token in the banners: pass --token');
      return await runOnStack(ctx, o, stack, token, tail);
    } finally {
      await stack.stop();
    }
  },
};

async function runOnStack(
  ctx: RunContext,
  o: ScenarioOptions,
  stack: LocalStack,
  token: string,
  stackLog: readonly string[],
): Promise<RunResult[]> {
  const [app1] = stack.instances;
  // Control traffic (simulator, last seqs, /metrics) goes to app1, the publishing instance;
  // its CPU is the run's `service` figure, the other instance's is in `extra`.
  const publisher: RunningService = {
    host: '127.0.0.1',
    httpPort: app1.httpPort,
    httpsPort: 0, // unused: no run of this scenario goes through the byte-counting proxy
    grpcPort: app1.grpcPort,
    pid: app1.process.pid,
    inspectorUrl: undefined,
    token,
    pinned: false,
    stop: async () => undefined,
  };
  const nginx: SubscriberEndpoint = {
    host: '127.0.0.1',
    httpPort: stack.settings.nginx.httpPort,
    httpsPort: stack.settings.nginx.httpsPort,
    grpcPort: stack.settings.nginx.grpcPort,
    // The stack's development certificate is for localhost (and 127.0.0.1).
    grpcTls: { caPem: stack.tlsCert, serverName: 'localhost' },
  };
  const direct: SubscriberEndpoint[] = stack.instances.map((i) => ({
    host: '127.0.0.1',
    httpPort: i.httpPort,
    httpsPort: 0,
    grpcPort: i.grpcPort,
  }));
  let subscribers = o.subscribers ?? (o.tiny ? 4 : 200);
  if (subscribers > CLUSTER_MAX_SUBSCRIBERS) {
    ctx.progress(
      `[cluster] ${subscribers} subscribers capped at ${CLUSTER_MAX_SUBSCRIBERS} (the stack's nginx: 1,024 connections)`,
      true,
    );
    subscribers = CLUSTER_MAX_SUBSCRIBERS;
  }
  // First, with no subscriber anywhere: what an instance pays for orders it does not serve.
  const out: RunResult[] = await idleInstancePhase(ctx, o, stack, token);
  for (const transport of o.transports) {
    const variants: [string, SubscriberEndpoint[]][] = [['nginx', [nginx]]];
    if (!transport.endsWith('-h2')) variants.push(['direct', direct]);
    for (const [variant, endpoints] of variants) {
      if (ctx.aborted()) return out;
      const run: TransportRun = {
        scenario: 'cluster',
        variant,
        transport,
        subscribers,
        ratePerOrder: o.rate ?? 10,
        durationS: o.durationS ?? (o.tiny ? 1 : 5),
        payloadBytes: o.payloadBytes ?? defaultPayloadBytes(transport),
        env: { STREAM_DOMAIN: CLUSTER_STACK_ENV.STREAM_DOMAIN },
        grpcSharedChannel: o.grpcSharedChannel,
        endpoints,
      };
      const figures = perInstanceFigures(stack.instances, token);
      try {
        out.push(withStackLog(await runAgainst(ctx, publisher, run, figures.hooks), stackLog));
      } finally {
        figures.stop();
      }
    }
  }
  return out;
}

/** Lines of the stack's output a failed run's error ends with. */
export const STACK_LOG_LINES_ON_FAILURE = 10;

/**
 * A failed run's error with the stack's last lines (nginx's errors, an instance's): what
 * the clients saw rarely says why (only "0/4 subscribers connected"), what the stack's
 * processes said last often does.
 */
export function withStackLog(r: RunResult, stackLog: readonly string[]): RunResult {
  if (r.ok || stackLog.length === 0) return r;
  const lines = stackLog.slice(-STACK_LOG_LINES_ON_FAILURE).join('\n');
  return { ...r, error: `${r.error ?? 'failed'}\nthe stack's last lines:\n${lines}` };
}

interface InstanceReading {
  readonly subscribers: number;
  readonly deliveries: number;
  readonly dropped: number;
  readonly backend: string;
}

async function readInstance(admin: AdminClient): Promise<InstanceReading> {
  const m = (await admin.metrics()) ?? [];
  return {
    subscribers: promValue(m, 'order_bus_subscribers') ?? 0,
    deliveries: promValue(m, 'order_deliveries_total') ?? 0,
    dropped: promValue(m, 'order_queue_dropped_events_total') ?? 0,
    backend: m.find((s) => s.name === 'order_store_up')?.labels.backend ?? 'unknown',
  };
}

/**
 * Each instance's bus subscriptions once every subscriber is connected (long-poll holds
 * one only while a poll waits: a snapshot), and its
 * deliveries, overflow drops and CPU from the clock's start to the end of the drain.
 * The run's own `droppedByService` is app1's: a drop on app2 shows as `lost` there (the
 * safe side) and as `app2Dropped` here.
 */
function perInstanceFigures(
  instances: readonly RunningInstance[],
  token: string,
): { hooks: RunHooks; stop: () => void } {
  const admins = instances.map(
    (i) =>
      new AdminClient(
        { host: '127.0.0.1', httpPort: i.httpPort, httpsPort: 0, grpcPort: i.grpcPort, pid: 0 },
        token,
      ),
  );
  const samplers = instances.map((i) => UsageSampler.forPid(i.process.pid ?? 0));
  let before: InstanceReading[] = [];
  const stop = (): void => {
    for (const s of samplers) s.stop();
  };
  return {
    stop,
    hooks: {
      beforeStart: async () => {
        before = await Promise.all(admins.map(readInstance));
        for (const s of samplers) s.start();
      },
      afterDrain: async (live) => {
        const usage = samplers.map((s) => s.stop());
        const after = await Promise.all(admins.map(readInstance));
        const sim = await live.admin.status();
        return {
          store: after[0].backend,
          simulatorPublished: sim.published,
          simulatorFailed: sim.failed,
          ...Object.fromEntries(
            instances.flatMap((inst, k) => [
              [`${inst.name}Subscribers`, before[k]?.subscribers ?? 0],
              [`${inst.name}Delivered`, after[k].deliveries - (before[k]?.deliveries ?? 0)],
              [`${inst.name}Dropped`, after[k].dropped - (before[k]?.dropped ?? 0)],
              [`${inst.name}CpuPct`, usage[k].cpuPctAvg],
            ]),
          ),
        };
      },
    },
  };
}
