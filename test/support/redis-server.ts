import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stablePort } from './stable-port';

/** Debian's redis-server; REDIS_SERVER_BIN overrides. */
export const REDIS_SERVER_BIN = process.env.REDIS_SERVER_BIN ?? 'redis-server';
const READY_TIMEOUT_MS = 5_000;

export interface RedisServerOptions {
  /**
   * Keep data across a restart (append-only file, fsync on every write, in a private
   * temporary directory). Otherwise nothing is saved: a restart starts empty.
   * @default false
   */
  readonly persistent?: boolean;
}

/**
 * A private redis-server on a loopback port of its own, for tests: never the machine's
 * shared Redis on 6379. `stop()` kills it (SIGKILL, as a crash), `start()` brings it back
 * on the same port (a `stablePort`, so nothing took it meanwhile; with its data when
 * persistent), `freeze()` and `thaw()` stop and continue it, `shutdown()` kills it and
 * removes its files.
 */
export class RedisServer {
  private proc?: ChildProcess;
  private readonly dir: string;

  private constructor(
    readonly port: number,
    private readonly persistent: boolean,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'order-status-redis-'));
  }

  static async launch(opts: RedisServerOptions = {}): Promise<RedisServer> {
    const server = new RedisServer(await stablePort(), opts.persistent ?? false);
    await server.start();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.proc !== undefined;
  }

  /** Starts the server and resolves once it accepts connections. */
  async start(): Promise<void> {
    if (this.proc) return;
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--dir',
      this.dir,
      ...(this.persistent
        ? ['--appendonly', 'yes', '--appendfsync', 'always']
        : ['--appendonly', 'no']),
    ];
    const proc = spawn(REDIS_SERVER_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(
        () => fail(new Error(`redis-server not ready: ${out}`)),
        READY_TIMEOUT_MS,
      );
      const fail = (err: Error) => {
        clearTimeout(timer);
        proc.kill('SIGKILL');
        this.proc = undefined;
        reject(err);
      };
      proc.once('error', fail);
      proc.once('exit', (code) => fail(new Error(`redis-server exited (${code}): ${out}`)));
      proc.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          proc.removeAllListeners('exit');
          proc.removeAllListeners('error');
          proc.stdout?.removeAllListeners('data').resume();
          resolve();
        }
      });
    });
  }

  /**
   * Freezes the server (SIGSTOP): its connections stay open and accept bytes, but
   * nothing answers, as with a stuck host or a long fork. `thaw()` lets it run again.
   */
  freeze(): void {
    this.proc?.kill('SIGSTOP');
  }

  thaw(): void {
    this.proc?.kill('SIGCONT');
  }

  /** Kills the server at once (no shutdown save) and waits until it is gone. */
  async stop(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    this.proc = undefined;
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGKILL');
    await exited;
  }

  async shutdown(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
