import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { testAuthEnv } from '../support/auth';
import { TEST_CERT_DIR } from '../support/test-app';

/** The production build (`npm run build`, which `npm test` runs before Jest). */
export const SERVICE_ENTRY = join(__dirname, '..', '..', 'dist', 'apps', 'order-status', 'main.js');

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly httpUrl: string;
  readonly grpcAddress: string;
  /** Every stdout line so far (JSON log lines and the listening line). */
  readonly lines: string[];
  /** Resolves with the exit code (or signal) once the process is gone. */
  readonly exited: Promise<number | string>;
  kill(): void;
}

/**
 * Starts the built service (`entry`: another build of it) on free ports and waits for its
 * JSON "listening" line.
 */
export async function spawnService(
  env: Record<string, string> = {},
  entry: string = SERVICE_ENTRY,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [entry], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      HTTP_PORT: '0',
      HTTPS_PORT: '0',
      GRPC_PORT: '0',
      SIMULATOR_ENABLED: 'false',
      LOG_LEVEL: 'info',
      TLS_DEV_CERT_DIR: TEST_CERT_DIR,
      ...testAuthEnv(),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stderr }).on('line', (l) => stderr.push(l));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const ports = await new Promise<{ http: number; grpc: number }>((resolve, reject) => {
    // Start-up is CPU-bound (NestJS's ES modules: ~3 s of CPU on Node 20, less on 26); on a
    // busy shared CI host that has taken more than 15 s of wall time.
    const timer = setTimeout(() => {
      // A service that never listened is still running: without this it outlives the spec.
      child.kill('SIGKILL');
      reject(new Error('service did not start in 60 s'));
    }, 60_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      if (!line.includes('"listening"')) return;
      clearTimeout(timer);
      resolve(JSON.parse(line) as { http: number; grpc: number });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} during start:\n${stderr.join('\n')}`));
    });
  });
  return {
    child,
    httpUrl: `http://127.0.0.1:${ports.http}`,
    grpcAddress: `127.0.0.1:${ports.grpc}`,
    lines,
    exited,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** The service's JSON log lines with `msg` equal to `msg`. */
export function logLines(service: ServiceProcess, msg: string): Record<string, unknown>[] {
  return service.lines.flatMap((line) => {
    if (!line.startsWith('{')) return [];
    const parsed = JSON.parse(line) as Record<string, unknown>;
    return parsed.msg === msg ? [parsed] : [];
  });
}
