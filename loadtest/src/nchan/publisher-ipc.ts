import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { canPin, GENERATOR_CPU } from '../service/launcher';
import type {
  ServiceControl,
  SimulatorSchedule,
  SimulatorStatus,
} from '../service/service-control';

/** A ServiceControl call, as sent to the publisher process. */
export type ControlRequest = { readonly id: number } & (
  | { readonly method: 'prepare'; readonly schedule: SimulatorSchedule }
  | { readonly method: 'start' | 'stop' | 'status' | 'close' }
  | { readonly method: 'lastSeqs'; readonly orderIds: readonly string[] }
);

/** Its answer: the call's value (a Map travels as its entries), or the error's message. */
export type ControlReply =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: string };

type Call = ControlRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;

export const PUBLISHER_START_TIMEOUT_MS = 10_000;
/** prepare() opens a WebSocket per order and waits for Nchan to store each first event. */
const CALL_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 5_000;

/**
 * Nchan's publisher, run in a process of its own on the generator's core, driven over IPC.
 *
 * Nchan has no simulator, so the load test publishes to it (a WebSocket message per
 * event, and Nchan's acknowledgement back): ~35-50 % of a core at 5,000 events/s. In the
 * generator's process that work blocked the event loop that timestamps every delivery,
 * and it was counted as the generator's own CPU. In a process of its own it is sampled
 * and reported apart ('publisher N% CPU'), and the generator's core counts as saturated
 * when the two together fill it.
 *
 * Why not on the server's core, beside nginx, where the service's and the bare server's
 * publishing runs: sharing a core with its publisher raised nginx's CPU per delivery by
 * about half (SSE, two alternating pairs: 64.5 and 69.8 µs against 41.3 and 46.0, while the
 * bare server moved 5 %). Every publish then woke nginx at once for that one message,
 * where on separate cores a tick's messages reach it together. Nchan's CPU figure is the
 * comparison's point; a generator core that saturates is flagged.
 */
export class PublisherProcess implements ServiceControl {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();
  private readonly exited: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (reply: ControlReply) => {
      const call = this.pending.get(reply.id);
      if (call === undefined) return;
      this.pending.delete(reply.id);
      clearTimeout(call.timer);
      if (reply.ok) call.resolve(reply.value);
      else call.reject(new Error(`Nchan publisher: ${reply.error}`));
    });
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        for (const [, call] of this.pending) {
          clearTimeout(call.timer);
          call.reject(new Error(`Nchan publisher exited (${signal ?? code}) during a call`));
        }
        this.pending.clear();
        resolve();
      }),
    );
  }

  /** The publisher process's pid (it is not the generator's). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Starts the process (pinned to the generator's core when the host allows) for Nchan at host:port. */
  static async launch(host: string, port: number): Promise<PublisherProcess> {
    const node = [
      process.execPath,
      '--require',
      require.resolve('tsx/cjs'),
      join(__dirname, 'publisher-process.ts'),
      host,
      String(port),
    ];
    const argv = canPin() ? ['taskset', '-c', String(GENERATOR_CPU), ...node] : node;
    // taskset execs node, which finds the IPC channel's descriptor in its environment.
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const publisher = new PublisherProcess(child);
    await Promise.race([
      publisher.status(),
      new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error('the Nchan publisher process did not answer')),
          PUBLISHER_START_TIMEOUT_MS,
        ).unref(),
      ),
    ]).catch(async (err: unknown) => {
      child.kill('SIGKILL');
      await publisher.exited;
      throw err;
    });
    return publisher;
  }

  private call<T>(req: Call, timeoutMs = CALL_TIMEOUT_MS): Promise<T> {
    if (this.child.exitCode !== null || this.child.signalCode !== null || !this.child.connected) {
      return Promise.reject(new Error('the Nchan publisher process is not running'));
    }
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`Nchan publisher: ${req.method} took over ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve: (v) => resolve(v as T), reject, timer });
      this.child.send({ ...req, id } satisfies ControlRequest);
    });
  }

  prepare(schedule: SimulatorSchedule): Promise<SimulatorStatus> {
    return this.call({ method: 'prepare', schedule });
  }

  start(): Promise<SimulatorStatus> {
    return this.call({ method: 'start' });
  }

  stop(): Promise<SimulatorStatus> {
    return this.call({ method: 'stop' });
  }

  status(): Promise<SimulatorStatus> {
    return this.call({ method: 'status' });
  }

  async lastSeq(orderId: string): Promise<number> {
    return (await this.lastSeqs([orderId])).get(orderId) ?? 0;
  }

  async lastSeqs(orderIds: readonly string[]): Promise<Map<string, number>> {
    return new Map(await this.call<[string, number][]>({ method: 'lastSeqs', orderIds }));
  }

  /** Nchan has no Prometheus endpoint. */
  async metrics(): Promise<undefined> {
    return undefined;
  }

  /** Closes the publisher's connections, then ends the process (killed if it lingers). */
  async close(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      await this.call({ method: 'close' }, STOP_TIMEOUT_MS).catch(() => undefined);
      this.child.disconnect();
      const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await this.exited;
      clearTimeout(timer);
    }
  }
}
