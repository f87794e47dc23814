import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../deploy/stack/free-ports';
import { canPin, SERVICE_CPU, type RunningService } from '../service/launcher';
import { PublisherProcess } from './publisher-ipc';

/** Where Debian's libnginx-mod-nchan puts the module (`apt-get install libnginx-mod-nchan`). */
export const NCHAN_MODULE_PATHS = [
  '/usr/lib/nginx/modules/ngx_nchan_module.so',
  '/usr/share/nginx/modules/ngx_nchan_module.so',
];
export const NCHAN_START_TIMEOUT_MS = 10_000;
export const NCHAN_STOP_TIMEOUT_MS = 5_000;
/** Matches the service's and the bare server's replay window, so resume costs compare. */
export const NCHAN_MESSAGE_BUFFER_LENGTH = 256;

export type NchanAvailability =
  { readonly ok: true; readonly module: string } | { readonly ok: false; readonly reason: string };

/** Whether nginx and the Nchan module are installed; the reason when not (the run is skipped). */
export function nchanAvailable(): NchanAvailability {
  const nginx = spawnSync('nginx', ['-v'], { encoding: 'utf8' });
  if (nginx.error || nginx.status !== 0) {
    return {
      ok: false,
      reason: 'nginx is not on the PATH (apt-get install -y libnginx-mod-nchan)',
    };
  }
  const module = NCHAN_MODULE_PATHS.find((p) => existsSync(p));
  if (!module) {
    return {
      ok: false,
      reason: `the Nchan module is not installed (looked in ${NCHAN_MODULE_PATHS.join(', ')}; apt-get install -y libnginx-mod-nchan)`,
    };
  }
  return { ok: true, module };
}

/**
 * One process (`master_process off`, one worker's work in the process we pin and
 * sample), a scratch prefix for every file nginx writes, loopback only. Subscribers use
 * the service's routes, so the SSE client needs no change: `/v1/orders/:id/stream`
 * (EventSource, `event: status` like the service), `/events` (long-poll), `/ws`
 * (WebSocket). `nchan_subscriber_first_message oldest` replays the retained messages to
 * a new subscriber, as the service's `after=0` does; publishers write to `/pub/:id`.
 */
export function nchanConfig(o: { module: string; dir: string; port: number }): string {
  return `load_module ${o.module};
daemon off;
master_process off;
worker_processes 1;
pid ${o.dir}/nginx.pid;
error_log ${o.dir}/error.log warn;
worker_rlimit_nofile 65536;
events { worker_connections 65536; }
http {
  access_log off;
  client_body_temp_path ${o.dir}/body;
  proxy_temp_path ${o.dir}/proxy;
  fastcgi_temp_path ${o.dir}/fastcgi;
  uwsgi_temp_path ${o.dir}/uwsgi;
  scgi_temp_path ${o.dir}/scgi;
  nchan_shared_memory_size 256m;
  server {
    listen 127.0.0.1:${o.port};
    location ~ ^/pub/([^/]+)$ {
      nchan_publisher;
      nchan_channel_id $1;
      nchan_message_buffer_length ${NCHAN_MESSAGE_BUFFER_LENGTH};
      nchan_message_timeout 600s;
    }
    location ~ ^/v1/orders/([^/]+)/(stream|events|ws)$ {
      nchan_subscriber;
      nchan_channel_id $1;
      nchan_eventsource_event status;
      nchan_subscriber_first_message oldest;
      # A long-poll answer carries every message after the client's cursor, as the
      # service's does: one message a poll would hold a client that fell behind there.
      nchan_longpoll_multipart_response on;
    }
  }
}
`;
}

const running = new Set<ChildProcess>();
let exitHandlerInstalled = false;
/** An nginx left running would hold its port and its core after the load test exits. */
function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

async function accepting(port: number, timeoutMs: number): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = createConnection({ host: '127.0.0.1', port });
      c.once('connect', () => (c.destroy(), resolve(true)));
      c.once('error', () => resolve(false));
    });
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/**
 * Starts nginx with Nchan on a free loopback port, pinned to the service's core as the
 * service is, and returns it as a RunningService whose `control` is the load test's
 * publisher (Nchan has no simulator), in a process of its own on the generator's core
 * (publisher-ipc.ts says why).
 */
export async function launchNchan(): Promise<RunningService> {
  const available = nchanAvailable();
  if (!available.ok) throw new Error(`Nchan unavailable: ${available.reason}`);
  const dir = mkdtempSync(join(tmpdir(), 'loadtest-nchan-'));
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, d));
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nchanConfig({ module: available.module, dir, port }));
  const pinned = canPin();
  const cmd = ['nginx', '-p', dir, '-c', conf];
  const argv = pinned ? ['taskset', '-c', String(SERVICE_CPU), ...cmd] : cmd;
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  const stderr: string[] = [];
  child.stderr.setEncoding('utf8').on('data', (t: string) => stderr.push(t));
  running.add(child);
  installExitHandler();
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  if (!(await accepting(port, NCHAN_START_TIMEOUT_MS)) || child.exitCode !== null) {
    child.kill('SIGKILL');
    await exited;
    cleanup();
    throw new Error(`nginx (Nchan) did not start on port ${port}: ${stderr.join('').trim()}`);
  }
  let control: PublisherProcess;
  try {
    control = await PublisherProcess.launch('127.0.0.1', port);
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    cleanup();
    throw err;
  }
  return {
    host: '127.0.0.1',
    httpPort: port,
    httpsPort: port,
    grpcPort: port,
    // taskset execs nginx, and master_process off keeps every worker's job in this pid.
    pid: child.pid,
    inspectorUrl: undefined,
    token: undefined,
    pinned,
    control,
    helperPids: control.pid === undefined ? [] : [control.pid],
    stop: async () => {
      await control.close();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGQUIT');
        const timer = setTimeout(() => child.kill('SIGKILL'), NCHAN_STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      cleanup();
    },
  };
}
