import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadTlsMaterial } from '../../apps/order-status/src/http/dev-certificate';
import { freePorts } from './free-ports';
import {
  instanceEnv,
  NGINX_TEMPLATE,
  nginxVariables,
  renderTemplate,
  STACK,
  type StackSettings,
} from './stack-settings';

/**
 * @default 60_000 ms for any one process of the stack to become ready (the service's
 * start-up is CPU-bound and has taken more than 15 s on a busy shared 2-core host)
 */
export const STACK_START_TIMEOUT_MS = 60_000;
/** @default 5_000 ms between SIGTERM and SIGKILL when stopping */
export const STACK_STOP_GRACE_MS = 5_000;
/**
 * Starts on fresh free ports before giving up, when a port was taken meanwhile: a free
 * port is one the OS handed out and was closed again, and until the stack's process binds
 * it, seconds later, another process on the host may take it (the likely cause of a CI
 * run whose gRPC clients could not connect through nginx: nginx, its HTTP port bound,
 * failing to bind its gRPC port, reproduced by test/stack/local-stack-ports.e2e-spec.ts).
 */
export const FREE_PORT_ATTEMPTS = 5;

/** A process of the stack could not bind its port (EADDRINUSE): another took it. */
export class StackPortTakenError extends Error {}

export interface LocalStackOptions {
  /** Repository root (where dist/ and deploy/ are). @default process.cwd() */
  readonly rootDir?: string;
  /** Any free loopback ports instead of the fixed ones (tests, or when they are taken). */
  readonly freePorts?: boolean;
  /**
   * Picks the ports for one attempt (tests: a port taken on purpose); with it, as with
   * `freePorts`, a start that loses a port to another process is tried again on ports
   * picked anew, up to FREE_PORT_ATTEMPTS times.
   */
  readonly pickPorts?: () => Promise<StackSettings>;
  /** Variables for every instance on top of the stack's (e.g. LOG_LEVEL, SSE_RETRY_MS). */
  readonly env?: Readonly<Record<string, string>>;
  /** Where each process's output goes, line by line. @default stderr with a prefix */
  readonly log?: (source: string, line: string) => void;
}

export interface RunningInstance {
  readonly name: string;
  readonly httpPort: number;
  readonly grpcPort: number;
  readonly process: ChildProcess;
  /** The environment it was started with (what its configuration is read from). */
  readonly env: Readonly<Record<string, string>>;
}

export interface LocalStack {
  readonly settings: StackSettings;
  readonly instances: readonly RunningInstance[];
  /** PEM of the certificate nginx presents (the service's development certificate). */
  readonly tlsCert: string;
  readonly urls: {
    readonly http: string;
    readonly https: string;
    readonly grpc: string;
    readonly redis: string;
  };
  /** Stops everything (instances first, then nginx, then Redis); idempotent. */
  stop(): Promise<void>;
}

/**
 * The docker-compose topology as local processes on loopback: redis-server, two built
 * service instances (`node dist/apps/order-status/main.js`) and nginx with the same
 * configuration template. Everything it starts is stopped by `stop()`, and its files live
 * in one temporary directory removed there.
 */
export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const root = resolve(opts.rootDir ?? process.cwd());
  const main = join(root, 'dist/apps/order-status/main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
  const log = opts.log ?? ((source, line) => process.stderr.write(`[${source}] ${line}\n`));
  const pick = opts.pickPorts ?? (opts.freePorts ? () => withFreePorts(STACK) : undefined);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(root, main, pick ? await pick() : STACK, opts, log);
    } catch (err) {
      if (!(err instanceof StackPortTakenError) || !pick || attempt >= FREE_PORT_ATTEMPTS) {
        throw err;
      }
      log('stack', `${err.message}; starting again on other ports`);
    }
  }
}

async function startOnce(
  root: string,
  main: string,
  settings: StackSettings,
  opts: LocalStackOptions,
  logLine: NonNullable<LocalStackOptions['log']>,
): Promise<LocalStack> {
  // What the processes said, to tell a port taken by another process from other failures.
  let portTaken: string | undefined;
  const log = (source: string, line: string) => {
    if (portTaken === undefined && PORT_TAKEN.test(line)) portTaken = `[${source}] ${line}`;
    logLine(source, line);
  };
  assertDistinctPorts(settings);
  const work = mkdtempSync(join(tmpdir(), 'order-status-stack-'));
  const started: { redis?: ChildProcess; nginx?: ChildProcess; instances: ChildProcess[] } = {
    instances: [],
  };
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // Instances first (they drain their streams), then the proxy, then Redis.
      for (const group of [started.instances, [started.nginx], [started.redis]]) {
        await Promise.all(group.flatMap((c) => (c ? [terminate(c)] : [])));
      }
      rmSync(work, { recursive: true, force: true });
    })());

  try {
    const redis = spawnLogged(
      'redis',
      'redis-server',
      [
        ...['--port', String(settings.redisPort), '--bind', '127.0.0.1', '--dir', work],
        ...['--appendonly', 'yes', '--save', ''],
      ],
      {},
      log,
    );
    started.redis = redis;
    await waitForOutput(redis, /Ready to accept connections/, 'redis-server');

    // Made (or read) here, before any process starts: nginx presents it, the instances
    // find it in place, and the clients are given the same one.
    const certDir = join(root, '.certs');
    const tls = await loadTlsMaterial({ devCertDir: certDir });

    // nginx before the instances: their own TLS listeners bind port 0, and the OS could
    // hand one of them a port picked for nginx that nginx had not bound yet.
    const nginx = startNginx(root, work, settings, certDir, log);
    started.nginx = nginx;
    // Every listener: nginx binds them one by one, and while it retries one that is taken
    // (for about 2.5 s, then it exits) the others already accept connections. A port
    // that accepts may also be another process's: nginx said at once if a bind failed.
    const { httpPort, httpsPort, grpcPort } = settings.nginx;
    for (const port of [httpPort, httpsPort, grpcPort]) await waitForPort(port, nginx, 'nginx');
    await new Promise((r) => setTimeout(r, NGINX_BIND_SETTLE_MS));
    if (portTaken !== undefined || nginx.exitCode !== null) {
      throw new Error(`nginx did not bind every port (${httpPort}, ${httpsPort}, ${grpcPort})`);
    }

    const instances: RunningInstance[] = [];
    for (const instance of settings.instances) {
      const env = {
        ...instanceEnv(settings, instance, { bind: '127.0.0.1', redis: '127.0.0.1' }),
        TLS_DEV_CERT_DIR: certDir,
        ...opts.env,
      };
      const proc = spawnLogged(instance.name, process.execPath, [main], env, log);
      started.instances.push(proc);
      await waitForOutput(proc, /"event":"listening"/, instance.name);
      instances.push({ ...instance, process: proc, env });
    }

    return {
      settings,
      instances,
      tlsCert: tls.cert,
      urls: {
        http: `http://localhost:${settings.nginx.httpPort}`,
        https: `https://localhost:${settings.nginx.httpsPort}`,
        grpc: `localhost:${settings.nginx.grpcPort}`,
        redis: `redis://127.0.0.1:${settings.redisPort}`,
      },
      stop,
    };
  } catch (err) {
    await stop();
    if (portTaken !== undefined) {
      throw new StackPortTakenError(`a port was taken: ${portTaken}`, { cause: err });
    }
    throw err;
  }
}

/** @throws Error when two of the stack's listeners were given one port. */
function assertDistinctPorts(settings: StackSettings): void {
  const owners = new Map<number, string>();
  const give = (port: number, owner: string) => {
    const other = owners.get(port);
    if (other !== undefined) throw new Error(`port ${port} is given to both ${other} and ${owner}`);
    owners.set(port, owner);
  };
  give(settings.redisPort, 'redis');
  for (const [name, port] of Object.entries(settings.nginx)) give(port, `nginx ${name}`);
  for (const i of settings.instances) {
    give(i.httpPort, `${i.name} httpPort`);
    give(i.grpcPort, `${i.name} grpcPort`);
  }
}

/**
 * How long after its ports accept nginx's bind errors are looked for: it logs a failed
 * bind at once, on its first pass over its listeners, while the others already accept.
 */
const NGINX_BIND_SETTLE_MS = 100;

/** How redis-server, nginx and Node say that a port is already bound. */
const PORT_TAKEN = /EADDRINUSE|Address already in use/;

function startNginx(
  root: string,
  work: string,
  settings: StackSettings,
  certDir: string,
  log: NonNullable<LocalStackOptions['log']>,
): ChildProcess {
  const template = readFileSync(join(root, NGINX_TEMPLATE), 'utf8');
  // On loopback only, like the instances. On every address, nginx would also bind a port
  // that another process listens on at 127.0.0.1, and that process, the more specific
  // listener, would take the stack's connections; on 127.0.0.1 the bind fails instead.
  const vars = nginxVariables(
    settings,
    () => '127.0.0.1',
    { certFile: join(certDir, 'dev-cert.pem'), keyFile: join(certDir, 'dev-key.pem') },
    '127.0.0.1',
  );
  mkdirSync(join(work, 'conf.d'));
  mkdirSync(join(work, 'temp'));
  writeFileSync(join(work, 'conf.d', 'order-status.conf'), renderTemplate(template, vars));
  // The top level the official image provides in docker-compose: here everything points
  // into the stack's own directory, so no root-owned path is needed.
  writeFileSync(
    join(work, 'nginx.conf'),
    [
      'daemon off;',
      'worker_processes 1;',
      `pid ${join(work, 'nginx.pid')};`,
      'error_log stderr warn;',
      'events { worker_connections 1024; }',
      'http {',
      '  access_log off;',
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
        (t) => `  ${t}_temp_path ${join(work, 'temp', t)};`,
      ),
      `  include ${join(work, 'conf.d', '*.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  return spawnLogged(
    'nginx',
    'nginx',
    ['-p', work, '-c', join(work, 'nginx.conf'), '-e', 'stderr'],
    {},
    log,
  );
}

function spawnLogged(
  source: string,
  command: string,
  args: string[],
  env: Record<string, string>,
  log: NonNullable<LocalStackOptions['log']>,
): ChildProcess {
  const proc = spawn(command, args, {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [proc.stdout, proc.stderr]) {
    let rest = '';
    stream?.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') log(source, line);
    });
  }
  // Without a listener a missing binary would throw from an 'error' event.
  proc.on('error', (err) => log(source, `failed: ${err.message}`));
  return proc;
}

/** Resolves once `pattern` appears in the process output; rejects if it exits first. */
function waitForOutput(proc: ChildProcess, pattern: RegExp, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const done = (err?: Error) => {
      clearTimeout(timer);
      proc.stdout?.off('data', onData);
      proc.off('exit', onExit);
      proc.off('error', done);
      if (err) reject(err);
      else resolve();
    };
    const onData = (chunk: string) => {
      seen += chunk;
      if (pattern.test(seen)) done();
    };
    const onExit = (code: number | null) =>
      done(new Error(`${what} exited (${code}) before ready`));
    const timer = setTimeout(
      () => done(new Error(`${what} not ready after ${STACK_START_TIMEOUT_MS} ms`)),
      STACK_START_TIMEOUT_MS,
    );
    proc.stdout?.on('data', onData);
    proc.once('exit', onExit);
    proc.once('error', done);
  });
}

/** Resolves once something accepts connections on the port (nginx says nothing when up). */
async function waitForPort(port: number, proc: ChildProcess, what: string): Promise<void> {
  const deadline = performance.now() + STACK_START_TIMEOUT_MS;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${what} exited (${proc.exitCode})`);
    if (await portAccepts(port)) return;
    if (performance.now() > deadline) throw new Error(`${what} not listening on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether something accepts a TCP connection on 127.0.0.1:port now. */
export function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** SIGTERM, then SIGKILL after the grace period; resolves when the process is gone. */
function terminate(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), STACK_STOP_GRACE_MS);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

/** The same topology on ports the OS hands out. */
export async function withFreePorts(settings: StackSettings): Promise<StackSettings> {
  const [redisPort, httpPort, httpsPort, grpcPort, ...own] = await freePorts(
    4 + 2 * settings.instances.length,
  );
  return {
    ...settings,
    redisPort,
    nginx: { httpPort, httpsPort, grpcPort },
    instances: settings.instances.map((i, k) => ({
      ...i,
      httpPort: own[2 * k],
      grpcPort: own[2 * k + 1],
    })),
  };
}
