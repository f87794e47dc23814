import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { ServiceControl } from './service-control';

/**
 * The built service; `npm run build` makes it. LOADTEST_SERVICE_ENTRY names another copy
 * (a snapshot of dist/ kept under the repository, so node_modules and proto/ still
 * resolve), so a rebuild during a long run cannot swap the service between runs.
 */
export const SERVICE_ENTRY = resolve(
  process.env.LOADTEST_SERVICE_ENTRY ??
    resolve(__dirname, '../../../dist/apps/order-status/main.js'),
);
/**
 * Start-up is CPU-bound (loading NestJS's ES modules takes ~3 s of CPU on Node 20); on a
 * busy shared host it has taken more than 30 s of wall time on the service's one core.
 */
export const DEFAULT_START_TIMEOUT_MS = 60_000;
export const DEFAULT_STOP_TIMEOUT_MS = 5_000;
/** How long to wait, after the listening line, for the start-up banner (demo token). */
export const BANNER_TIMEOUT_MS = 3_000;

/** Core the service is pinned to and core the generator is pinned to, on a multi-core host. */
export const SERVICE_CPU = 1;
export const GENERATOR_CPU = 0;

export interface ServiceEndpoints {
  readonly host: string;
  readonly httpPort: number;
  readonly httpsPort: number;
  readonly grpcPort: number;
  /** Undefined when driving a service we did not start (--target). */
  readonly pid: number | undefined;
}

export interface LaunchOptions {
  /** Extra environment (BUS_QUEUE_CAPACITY, BUS_OVERFLOW_POLICY, ...). */
  readonly env?: Readonly<Record<string, string>>;
  /** Start with the inspector on a free port, so the idle scenario can force a GC. */
  readonly inspect?: boolean;
  /** Extra node options, e.g. `--cpu-prof` (inserted after `node` in either command). */
  readonly nodeArgs?: readonly string[];
  /**
   * The Node binary that runs the service (and a bare server) instead of the `node` on
   * PATH, to compare Node versions on the same build; the generator keeps its own Node.
   */
  readonly node?: string;
  /** Command to run instead of the built service (the bare servers of the overhead scenario). */
  readonly command?: readonly string[];
  readonly startTimeoutMs?: number;
}

export interface RunningService extends ServiceEndpoints {
  /** ws:// URL of the inspector, when started with `inspect`. */
  readonly inspectorUrl: string | undefined;
  /**
   * The demo token the service printed in its start-up banner (demo mode: tokens signed
   * with the public demo secret; it reads any order and may drive the simulator). Used
   * when no --token is given; for a framework floor, the token its listening line names.
   * Undefined for a bare server or a configured secret.
   */
  readonly token: string | undefined;
  readonly pinned: boolean;
  /**
   * How a run drives a server without the admin API (Nchan: the load test publishes
   * itself). @default an AdminClient of the server's HTTP port
   */
  readonly control?: ServiceControl;
  /**
   * Processes of the load test's own that serve this server (Nchan's publisher, on the
   * generator's core): sampled over each run, reported, not counted as others' work on
   * the host, and counted with the generator when judging whether its core saturated.
   */
  readonly helperPids?: readonly number[];
  stop(): Promise<void>;
  /**
   * How the process ended, once it has (undefined while it runs, and for a service we
   * did not start): the hostile scenario reports a crash instead of discarding the run.
   */
  exitInfo?(): ServiceExit | undefined;
}

export interface ServiceExit {
  readonly code: number | null;
  readonly signal: string | null;
  /** The last lines the service wrote to stderr. */
  readonly stderrTail: readonly string[];
}

const running = new Set<ChildProcess>();

/** Kills every service still running; installed once for SIGINT/SIGTERM and exit. */
function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}
let handlersInstalled = false;
function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}

/**
 * The host's cores, read once: after pinGenerator() this process's affinity is one core,
 * and availableParallelism() (which follows affinity) would say 1 from then on.
 */
const HOST_CORES = cpus().length;

export function canPin(): boolean {
  return HOST_CORES > 1 && process.platform === 'linux';
}

/** Sets this process's CPU affinity (every thread: -a) to `cpus`, a list such as `0` or `0-1`. */
function setAffinity(cpus: string): Promise<boolean> {
  return new Promise((done) => {
    execFile('taskset', ['-a', '-p', '-c', cpus, String(process.pid)], (err) => done(err === null));
  });
}

/** This process's CPU affinity as a list (`0-1`), from /proc; undefined where unreadable. */
function affinity(): string | undefined {
  try {
    return /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

/**
 * Pins this process (every thread) to the generator's core and returns how to undo it, or
 * undefined when it could not pin. The undo matters to a long-lived caller: a test
 * runner's worker left pinned runs every later test, and every process it starts
 * (services, browsers, inheriting the affinity), on that one core.
 */
export async function pinGenerator(): Promise<(() => Promise<void>) | undefined> {
  if (!canPin()) return undefined;
  const before = affinity();
  if (before === undefined || !(await setAffinity(String(GENERATOR_CPU)))) return undefined;
  return async () => {
    await setAffinity(before);
  };
}

interface ListeningLine {
  event: 'listening';
  http: number;
  https: number;
  grpc: number;
  pid: number;
  /** The token a server started by `command` accepts (a framework floor's guard). */
  token?: string;
}

function parseListening(line: string): ListeningLine | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const v = JSON.parse(line) as Partial<ListeningLine>;
    return v.event === 'listening' ? (v as ListeningLine) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts a fresh service on free ports (0) pinned to its own core, waits for its one
 * JSON "listening" line, and returns its ports and pid. stderr is kept (last lines) for
 * the error message if it dies during start-up.
 */
export async function launchService(options: LaunchOptions = {}): Promise<RunningService> {
  installExitHandlers();
  const pinned = canPin();
  const nodeArgs = [
    ...(options.inspect ? ['--inspect=127.0.0.1:0'] : []),
    ...(options.nodeArgs ?? []),
  ];
  const base = options.command ?? ['node', SERVICE_ENTRY];
  const cmd =
    base[0] === 'node' ? [options.node ?? 'node', ...nodeArgs, ...base.slice(1)] : [...base];
  const argv = pinned ? ['taskset', '-c', String(SERVICE_CPU), ...cmd] : [...cmd];
  const child = spawn(argv[0], argv.slice(1), {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      HTTP_PORT: '0',
      HTTPS_PORT: '0',
      GRPC_PORT: '0',
      SIMULATOR_ENABLED: 'false',
      LOG_LEVEL: 'warn',
      // Every simulated subscriber uses the one demo token, i.e. one principal, where real
      // clients would be thousands of customers: lift the per-principal stream cap
      // (default 100; 0 = unlimited, the service's documented load-test setting).
      LIMIT_CONNECTIONS_PER_PRINCIPAL: '0',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const stderr: string[] = [];
  let inspectorUrl: string | undefined;
  let token: string | undefined;
  // The service writes its banner (addresses, then in demo mode `export TOKEN=...`) in
  // one write after the listening line; it ends with an empty line.
  let inBanner = false;
  let bannerDone: () => void = () => undefined;
  const banner = new Promise<void>((resolve) => (bannerDone = resolve));
  createInterface({ input: child.stderr }).on('line', (line) => {
    const m = /Debugger listening on (ws:\/\/\S+)/.exec(line);
    if (m) inspectorUrl = m[1];
    const t = /^\s*export TOKEN=(\S+)/.exec(line);
    if (t) token = t[1];
    if (/^\s+gRPC\s/.test(line)) inBanner = true;
    else if (inBanner && line.trim() === '') bannerDone();
    stderr.push(line);
    if (stderr.length > 30) stderr.shift();
  });
  let exit: ServiceExit | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal, stderrTail: [...stderr] };
      resolve();
    }),
  );

  const listening = await new Promise<ListeningLine>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(
            `service did not report listening in ${options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS} ms`,
          ),
        ),
      options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
    );
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      const l = parseListening(line);
      if (!l) return;
      clearTimeout(timer);
      lines.removeAllListeners('line');
      child.stdout.resume(); // keep draining stdout so the service never blocks on it
      resolve(l);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} during start:\n${stderr.join('\n')}`));
    });
  }).catch(async (err: unknown) => {
    child.kill('SIGKILL');
    running.delete(child);
    await exited;
    throw err;
  });

  if (!options.command) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      banner,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, BANNER_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
  }

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) {
      running.delete(child);
      return;
    }
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), DEFAULT_STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
    running.delete(child);
  };

  return {
    host: '127.0.0.1',
    httpPort: listening.http,
    httpsPort: listening.https,
    grpcPort: listening.grpc,
    // taskset execs node, so the child's pid is the service's; the line confirms it.
    pid: listening.pid ?? child.pid,
    inspectorUrl,
    token: token ?? listening.token,
    pinned,
    stop,
    exitInfo: () => exit,
  };
}

/** A service we did not start (--target http://127.0.0.1:3000): ports by convention. */
export function targetService(url: string, httpsPort = 3443, grpcPort = 50051): RunningService {
  const u = new URL(url);
  if (u.hostname !== '127.0.0.1' && u.hostname !== 'localhost' && u.hostname !== '[::1]') {
    throw new TypeError(`--target must be a loopback address, got ${u.hostname}`);
  }
  return {
    host: u.hostname === 'localhost' ? '127.0.0.1' : u.hostname.replace(/[[\]]/g, ''),
    httpPort: Number(u.port || 80),
    httpsPort,
    grpcPort,
    pid: undefined,
    inspectorUrl: undefined,
    token: undefined,
    pinned: false,
    stop: async () => undefined,
  };
}
