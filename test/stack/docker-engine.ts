import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '../support/wait-for';

/** How long a daemon may take to answer its socket (it sets up iptables and the bridge). */
export const DOCKER_START_TIMEOUT_MS = 60_000;
/** SIGTERM to SIGKILL when the daemon stops. */
export const DOCKER_STOP_GRACE_MS = 30_000;
/**
 * The daemon, its builds and its containers run below the rest of the suite, whose specs
 * have 30 s timeouts: a cold app image build is minutes of CPU. Under contention nice 5
 * still leaves the stack about a quarter of a core.
 */
const DOCKER_NICENESS = 5;
/** What a daemon needs that a machine may not have, Debian package names. */
const TOOLS = { dockerd: 'docker.io', 'docker-compose': 'docker-compose' } as const;

/** Why no Docker daemon can be started here, or undefined when one may be. */
export function dockerUnavailableReason(): string | undefined {
  for (const [tool, pkg] of Object.entries(TOOLS)) {
    try {
      execFileSync(tool, ['--version'], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed (apt-get install -y ${pkg})`;
    }
  }
  if (process.getuid?.() !== 0) return 'dockerd needs root';
  return undefined;
}

/** A dockerd of the test's own: its socket, exec root and pid file in a scratch folder. */
export interface DockerEngine {
  /** `DOCKER_HOST` for the docker and docker-compose clients. */
  readonly host: string;
  /** Runs the docker CLI against this daemon; resolves with its standard output. */
  docker(args: readonly string[], timeoutMs?: number): Promise<string>;
  /** Stops the daemon (its data root stays, with the images, for the next run). */
  stop(): Promise<void>;
}

const run = promisify(execFile);

function ping(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/**
 * Starts dockerd on `dataRoot` (kept between runs: the images cache) and waits until it
 * answers. An exclusive lock on `<dataRoot>.lock`, held by the daemon, keeps a second
 * daemon off the same data root. The bridge and iptables are the daemon's defaults:
 * compose networks and published ports need them, and they work here (iptables-nft).
 */
export async function startDockerEngine(dataRoot: string): Promise<DockerEngine> {
  mkdirSync(dataRoot, { recursive: true });
  const scratch = mkdtempSync(join(tmpdir(), 'order-status-dockerd-'));
  const socketPath = join(scratch, 'docker.sock');
  const logFile = join(scratch, 'dockerd.log');
  const host = `unix://${socketPath}`;
  // `exec` hands the lock's file descriptor to dockerd: the lock lives as long as it does.
  const daemon: ChildProcess = spawn(
    'bash',
    [
      '-c',
      'exec 9>"$1.lock"; flock -n 9 || { echo "$1 is in use by another daemon" >&2; exit 75; }; ' +
        'exec nice -n "$3" dockerd --data-root "$1" --exec-root "$2/exec" --pidfile "$2/dockerd.pid" ' +
        '-H "unix://$2/docker.sock" >"$2/dockerd.log" 2>&1',
      'dockerd',
      dataRoot,
      scratch,
      String(DOCKER_NICENESS),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  daemon.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => daemon.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const log = () => {
    try {
      return readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n');
    } catch {
      return '';
    }
  };
  const stop = async () => {
    if (!gone) {
      daemon.kill('SIGTERM');
      const timer = setTimeout(() => daemon.kill('SIGKILL'), DOCKER_STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
    rmSync(scratch, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (gone) throw new Error(`dockerd exited: ${stderr.trim()}\n${log()}`);
        return ping(socketPath);
      },
      'dockerd to answer on its socket',
      DOCKER_START_TIMEOUT_MS,
      200,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    host,
    docker: async (args, timeoutMs = 120_000) =>
      (
        await run('docker', [...args], {
          env: { ...process.env, DOCKER_HOST: host },
          timeout: timeoutMs,
          maxBuffer: 16 * 1024 * 1024,
        })
      ).stdout,
    stop,
  };
}
