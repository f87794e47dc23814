import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { canPin, SERVICE_CPU } from '../service/launcher';
import {
  INSTANCE_CONFIG_ENV,
  type InstanceCommand,
  type InstanceConfig,
  type InstanceCounts,
  type InstanceMessage,
} from './instance-protocol';

const REPO_ROOT = resolve(__dirname, '../../..');
const ENTRY = join(__dirname, 'instance.ts');
/** Start-up (tsx compiles the entry) and the initial SUBSCRIBEs on a busy host. */
const REPLY_TIMEOUT_MS = 60_000;

/**
 * A simulated instance (instance.ts) in a child process, on the service's core when the
 * host allows pinning, as the launcher places the service. Run through tsx from the
 * repository root, so it works from the CLI and from jest alike.
 */
export class InstanceProcess {
  private readonly inbox: InstanceMessage[] = [];
  private waiter?: () => void;
  private exited = false;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (m: InstanceMessage) => {
      this.inbox.push(m);
      this.waiter?.();
    });
    child.on('exit', () => {
      this.exited = true;
      this.waiter?.();
    });
  }

  static async start(config: InstanceConfig): Promise<InstanceProcess> {
    const node = [process.execPath, '--import', 'tsx', ENTRY];
    const argv = canPin() ? ['taskset', '-c', String(SERVICE_CPU), ...node] : node;
    const child = spawn(argv[0], argv.slice(1), {
      cwd: REPO_ROOT,
      env: { ...process.env, [INSTANCE_CONFIG_ENV]: JSON.stringify(config) },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const p = new InstanceProcess(child);
    await p.next('connected');
    return p;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Subscribes the initial orders; resolves with the channels subscribed. */
  async follow(): Promise<number> {
    this.send({ type: 'follow' });
    return (await this.next('followed')).channels;
  }

  async go(): Promise<void> {
    this.send({ type: 'go' });
    await this.next('going');
  }

  async stop(): Promise<InstanceCounts> {
    this.send({ type: 'stop' });
    return this.next('stopped');
  }

  /** Ends the process (closing the IPC channel makes it exit; SIGKILL if it does not). */
  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.disconnect();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 3_000);
    await gone;
    clearTimeout(timer);
  }

  private send(command: InstanceCommand): void {
    this.child.send(command);
  }

  private async next<T extends InstanceMessage['type']>(
    type: T,
  ): Promise<Extract<InstanceMessage, { type: T }>> {
    const deadline = Date.now() + REPLY_TIMEOUT_MS;
    for (;;) {
      const m = this.inbox.shift();
      if (m?.type === 'failed') throw new Error(`simulated instance failed: ${m.error}`);
      if (m?.type === type) return m as Extract<InstanceMessage, { type: T }>;
      if (m !== undefined) throw new Error(`simulated instance: expected ${type}, got ${m.type}`);
      if (this.exited) throw new Error(`simulated instance exited before ${type}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`simulated instance: no ${type} in ${REPLY_TIMEOUT_MS} ms`);
      await new Promise<void>((r) => {
        const timer = setTimeout(r, left);
        this.waiter = () => {
          clearTimeout(timer);
          r();
        };
      });
      this.waiter = undefined;
    }
  }
}
