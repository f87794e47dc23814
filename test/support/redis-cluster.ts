import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { REDIS_SERVER_BIN } from './redis-server';
import { waitFor } from './wait-for';
import { stablePorts } from './stable-port';

/** Debian's redis-cli (package redis-tools); REDIS_CLI_BIN overrides. */
export const REDIS_CLI_BIN = process.env.REDIS_CLI_BIN ?? 'redis-cli';
/** @default 1_500 ms without an answer before a node is suspected (PFAIL) */
export const CLUSTER_NODE_TIMEOUT_MS = 1_500;
/** @default 20_000 ms for the cluster to form, or to settle after a failover */
export const CLUSTER_SETTLE_TIMEOUT_MS = 20_000;
const NODE_READY_TIMEOUT_MS = 5_000;
/** How long nodeCommand waits for the TCP connect (see there why this long). */
const NODE_CONNECT_TIMEOUT_MS = 10_000;
const SLOTS = 16_384;
/** How long the other nodes stay behind in a `source-first` slot move (closeSlotMigration). */
const LATE_NODES_PAUSE_MS = 300;

/**
 * Runs redis-server under `sh` and kills it when sh's stdin closes: if the test process
 * dies without its afterAll, the pipe closes and no orphan Redis is left behind. Both
 * share one process group (no job control in `sh -c`), which `kill()` signals.
 */
const WATCHDOG = '"$@" & pid=$!; read -r _; kill -9 "$pid"';

export interface ClusterShard {
  readonly master: number;
  readonly replicas: readonly number[];
  /** Inclusive slot ranges the master serves. */
  readonly slots: readonly (readonly [number, number])[];
}

interface NodeLine {
  readonly id: string;
  readonly port: number;
  readonly flags: readonly string[];
  readonly masterId: string;
  readonly slots: readonly (readonly [number, number])[];
}

/**
 * A private Redis Cluster for tests: `masters` x (1 master + 1 replica) redis-server
 * processes on free loopback ports (never the machine's Redis on 6379), each with its
 * own cluster bus port and config file in a temporary directory of this run, joined with
 * `redis-cli --cluster create ... --cluster-replicas 1`. `launch()` resolves once every
 * node says `cluster_state:ok`, agrees on who serves which slots, and every replica's
 * link to its master is up. `kill()` crashes one node (SIGKILL), `failover()` runs
 * `CLUSTER FAILOVER` on a replica, `shutdown()` kills every process group and removes
 * the files.
 */
export class RedisCluster {
  private readonly procs = new Map<number, ChildProcess>();
  private readonly busPorts = new Map<number, number>();

  private constructor(
    readonly ports: readonly number[],
    private readonly dir: string,
    private readonly nodeTimeoutMs: number,
  ) {}

  static async launch(
    opts: { masters?: number; nodeTimeoutMs?: number } = {},
  ): Promise<RedisCluster> {
    const masters = opts.masters ?? 3;
    const ports = await stablePorts(masters * 4);
    const cluster = new RedisCluster(
      ports.slice(0, masters * 2),
      mkdtempSync(join(tmpdir(), 'order-status-redis-cluster-')),
      opts.nodeTimeoutMs ?? CLUSTER_NODE_TIMEOUT_MS,
    );
    // The cluster bus defaults to port + 10,000, which may be taken (it falls in the
    // ephemeral range): each node gets a stable one of its own, kept across restarts.
    cluster.ports.forEach((p, i) => cluster.busPorts.set(p, ports[masters * 2 + i]));
    try {
      await Promise.all(cluster.ports.map((p) => cluster.startNode(p)));
      await promisify(execFile)(
        REDIS_CLI_BIN,
        [
          '--cluster',
          'create',
          ...cluster.ports.map((p) => `127.0.0.1:${p}`),
          '--cluster-replicas',
          '1',
          '--cluster-yes',
        ],
        { timeout: CLUSTER_SETTLE_TIMEOUT_MS },
      );
      await cluster.waitSettled('the new cluster');
    } catch (err) {
      await cluster.shutdown();
      throw err;
    }
    return cluster;
  }

  /** Seed nodes as REDIS_CLUSTER_NODES wants them: `127.0.0.1:P1,127.0.0.1:P2,...`. */
  get seedNodes(): string {
    return this.ports.map((p) => `127.0.0.1:${p}`).join(',');
  }

  get livePorts(): number[] {
    return this.ports.filter((p) => this.procs.has(p));
  }

  /** One command to one node, on a connection of its own (no retry, no queue). */
  command(port: number, ...args: (string | number)[]): Promise<unknown> {
    return nodeCommand(port, ...args);
  }

  /** The slot a key (or a hash-tagged key) lives in. */
  async slotOf(key: string): Promise<number> {
    return Number(await this.command(this.livePorts[0], 'CLUSTER', 'KEYSLOT', key));
  }

  /** Masters with their replicas and slots, as a live node sees them now. */
  async shards(port = this.livePorts[0]): Promise<ClusterShard[]> {
    const lines = await this.nodeLines(port);
    return lines
      .filter((l) => l.flags.includes('master') && !l.flags.includes('fail') && l.slots.length)
      .map((m) => ({
        master: m.port,
        slots: m.slots,
        replicas: lines
          .filter((l) => l.masterId === m.id && !l.flags.includes('fail'))
          .map((l) => l.port),
      }))
      .sort((a, b) => a.slots[0][0] - b.slots[0][0]);
  }

  /** The master serving `slot` now. */
  async masterOf(slot: number): Promise<ClusterShard> {
    const shard = (await this.shards()).find((s) =>
      s.slots.some(([from, to]) => slot >= from && slot <= to),
    );
    if (!shard) throw new Error(`no master serves slot ${slot}`);
    return shard;
  }

  /** Crashes one node (SIGKILL to its process group) and waits until it is gone. */
  async kill(port: number): Promise<void> {
    const proc = this.procs.get(port);
    if (!proc) return;
    this.procs.delete(port);
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    process.kill(-(proc.pid as number), 'SIGKILL');
    await exited;
  }

  /** Freezes one node (SIGSTOP): it neither answers nor replicates until `resume()`. */
  pause(port: number): void {
    this.signal(port, 'SIGSTOP');
  }

  resume(port: number): void {
    this.signal(port, 'SIGCONT');
  }

  /**
   * `CLUSTER FAILOVER` on a replica: the master stops writes, the replica catches up
   * with its replication offset and takes over, so nothing acknowledged is lost. Resolves
   * once the cluster has settled with the replica as master.
   */
  async failover(replicaPort: number): Promise<void> {
    await this.command(replicaPort, 'CLUSTER', 'FAILOVER');
    await this.waitPromoted(replicaPort);
  }

  /** Waits until `port` serves slots as a master and the cluster has settled. */
  async waitPromoted(port: number): Promise<void> {
    await waitFor(
      async () => (await this.shards(port).catch(() => [])).some((s) => s.master === port),
      `node ${port} promoted to master`,
      CLUSTER_SETTLE_TIMEOUT_MS,
      50,
    );
    await this.waitSettled(`the cluster after promoting ${port}`);
  }

  /**
   * Waits until every live node says `cluster_state:ok` with all slots served, they all
   * agree on the masters and their slots, and every live replica's link is up.
   */
  async waitSettled(what: string, timeoutMs = CLUSTER_SETTLE_TIMEOUT_MS): Promise<void> {
    let last = '';
    await waitFor(
      async () => {
        try {
          last = await this.settledProblem();
          return last === '';
        } catch (err) {
          last = err instanceof Error ? err.message : String(err);
          return false;
        }
      },
      `${what} to settle (last: ${last})`,
      timeoutMs,
      50,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; last problem: ${last}`);
    });
  }

  /** Moves `slot`'s ownership half-way: the source MIGRATING, the target IMPORTING. */
  async openSlotMigration(slot: number, toPort: number): Promise<void> {
    const from = await this.masterOf(slot);
    await this.command(
      toPort,
      'CLUSTER',
      'SETSLOT',
      slot,
      'IMPORTING',
      await this.idOf(from.master),
    );
    await this.command(
      from.master,
      'CLUSTER',
      'SETSLOT',
      slot,
      'MIGRATING',
      await this.idOf(toPort),
    );
  }

  /** Moves these keys of a migrating slot from its source to the target (`MIGRATE ... KEYS`). */
  async migrateKeys(slot: number, toPort: number, keys: readonly string[]): Promise<void> {
    const from = await this.masterOf(slot);
    await this.command(from.master, 'MIGRATE', '127.0.0.1', toPort, '', 0, 5_000, 'KEYS', ...keys);
  }

  /** Keys of `slot` still on its current owner. */
  async keysInSlot(slot: number, count = 1_000): Promise<string[]> {
    const from = await this.masterOf(slot);
    return (await this.command(from.master, 'CLUSTER', 'GETKEYSINSLOT', slot, count)) as string[];
  }

  /**
   * Ends a migration: `slot` belongs to `toPort` on every master, then settles. By default
   * the target learns first, then the source, then the others (the order the Redis docs
   * give). `source-first` tells the source alone, waits `LATE_NODES_PAUSE_MS`, then the
   * rest: the source unsubscribes the slot's shard channels at once, and every other node
   * still answers the old slot map meanwhile, as replicas do until gossip reaches them.
   */
  async closeSlotMigration(
    slot: number,
    toPort: number,
    order: 'target-first' | 'source-first' = 'target-first',
  ): Promise<void> {
    const id = await this.idOf(toPort);
    const from = (await this.masterOf(slot)).master;
    const masters = (await this.shards()).map((s) => s.master);
    const others = masters.filter((p) => p !== toPort && p !== from);
    const setOn = (p: number) => this.command(p, 'CLUSTER', 'SETSLOT', slot, 'NODE', id);
    if (order === 'source-first') {
      await setOn(from);
      await new Promise((resolve) => setTimeout(resolve, LATE_NODES_PAUSE_MS));
      for (const p of [toPort, ...others]) await setOn(p);
    } else {
      for (const p of [toPort, from, ...others]) await setOn(p);
    }
    await this.waitSettled(`the cluster after moving slot ${slot}`);
  }

  /** Kills every node and removes the run's directory; idempotent. */
  async shutdown(): Promise<void> {
    await Promise.all([...this.procs.keys()].map((p) => this.kill(p)));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private signal(port: number, signal: NodeJS.Signals): void {
    const proc = this.procs.get(port);
    if (!proc) throw new Error(`node ${port} is not running`);
    process.kill(-(proc.pid as number), signal);
  }

  private async idOf(port: number): Promise<string> {
    return String(await this.command(port, 'CLUSTER', 'MYID'));
  }

  private async nodeLines(port: number): Promise<NodeLine[]> {
    const text = String(await this.command(port, 'CLUSTER', 'NODES'));
    return text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((line) => {
        const [id, address, flags, masterId, , , , , ...slots] = line.trim().split(' ');
        return {
          id,
          port: Number(/:(\d+)@/.exec(address)?.[1]),
          flags: flags.split(','),
          masterId,
          slots: slots
            .filter((s) => !s.startsWith('[')) // a migration in progress, not ownership
            .map((s) => {
              const [from, to = from] = s.split('-').map(Number);
              return [from, to] as const;
            }),
        };
      });
  }

  /** What keeps the cluster from being settled, or '' when it is. */
  private async settledProblem(): Promise<string> {
    let view: string | undefined;
    for (const port of this.livePorts) {
      const info = String(await this.command(port, 'CLUSTER', 'INFO'));
      if (!info.includes('cluster_state:ok')) return `${port}: cluster_state not ok`;
      if (!info.includes(`cluster_slots_ok:${SLOTS}`)) return `${port}: not all slots ok`;
      const lines = await this.nodeLines(port);
      const mine = JSON.stringify(
        lines
          .filter((l) => l.flags.includes('master') && l.slots.length > 0)
          .map((l) => [l.port, l.slots])
          .sort(),
      );
      if (view !== undefined && mine !== view) return `${port}: sees other masters or slots`;
      view = mine;
      const servingIds = new Set(lines.filter((l) => l.slots.length > 0).map((l) => l.id));
      for (const other of this.livePorts) {
        const line = lines.find((l) => l.port === other);
        // Right after `--cluster create` a replica-to-be is still an empty master.
        if (!line || (!servingIds.has(line.id) && !servingIds.has(line.masterId))) {
          return `${port}: ${other} is neither serving nor replicating`;
        }
      }
      if (lines.find((l) => l.flags.includes('myself'))?.flags.includes('slave')) {
        const replication = String(await this.command(port, 'INFO', 'replication'));
        if (!replication.includes('master_link_status:up')) return `${port}: replica link down`;
      }
    }
    return '';
  }

  private async startNode(port: number): Promise<void> {
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(this.dir, `nodes-${port}.conf`),
      '--cluster-port',
      String(this.busPorts.get(port)),
      '--cluster-node-timeout',
      String(this.nodeTimeoutMs),
      '--appendonly',
      'no',
      '--save',
      '',
      // A replica's first full sync starts at once (the default waits 5 s for others).
      '--repl-diskless-sync-delay',
      '0',
      '--dir',
      this.dir,
    ];
    const proc = spawn('sh', ['-c', WATCHDOG, 'sh', REDIS_SERVER_BIN, ...args], {
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.procs.set(port, proc);
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(
        () => fail(new Error(`redis-server ${port} not ready: ${out}`)),
        NODE_READY_TIMEOUT_MS,
      );
      const fail = (err: Error) => {
        clearTimeout(timer);
        reject(err);
      };
      proc.once('error', fail);
      proc.once('exit', (code) => fail(new Error(`redis-server ${port} exited (${code}): ${out}`)));
      proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      proc.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          proc.removeAllListeners('exit');
          proc.removeAllListeners('error');
          proc.stdout?.removeAllListeners('data').resume();
          proc.stderr?.removeAllListeners('data').resume();
          resolve();
        }
      });
    });
  }
}

/**
 * One command to the Redis node on `port` (127.0.0.1), on a connection of its own: no
 * retry, no offline queue, closed after the answer.
 *
 * The connect timeout is generous on purpose: ioredis arms it as the socket's idle
 * timeout when the socket is made and clears it on the 'connect' event, and when this
 * process stalls longer than the timeout (a busy CI host, both Jest runs at once, GC) the
 * timer runs before the connect event is read and the client gives up on a node that
 * had accepted at once ("Connection is closed."). A dead node still refuses at once and a
 * frozen one (SIGSTOP: the kernel accepts for it) is bounded by the command timeout.
 */
export async function nodeCommand(port: number, ...args: (string | number)[]): Promise<unknown> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: NODE_CONNECT_TIMEOUT_MS,
    commandTimeout: 5_000,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    const [name, ...rest] = args.map(String);
    return await client.call(name, ...rest);
  } finally {
    client.disconnect();
  }
}
