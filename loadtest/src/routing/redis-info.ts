import { Redis } from 'ioredis';

/** Counters summed over every Redis node of a run (one server, or every cluster node). */
export interface RedisReading {
  /** used_cpu_user + used_cpu_sys, ms: Redis's own getrusage, finer than /proc's ticks. */
  readonly cpuMs: number;
  readonly usedMemoryBytes: number;
  /** Per command (lower case, e.g. `publish`, `ssubscribe`): calls and usec inside the call. */
  readonly commands: Readonly<Record<string, { calls: number; usec: number }>>;
}

/**
 * One INFO connection per node, opened once: reading must not add connections (each
 * one is Redis memory) between the readings it compares.
 */
export class RedisInfo {
  private readonly clients: Redis[];

  constructor(ports: readonly number[]) {
    this.clients = ports.map((port) => {
      const c = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
      c.on('error', () => undefined);
      return c;
    });
  }

  async read(): Promise<RedisReading> {
    const texts = await Promise.all(this.clients.map((c) => c.info('all')));
    let cpuMs = 0;
    let usedMemoryBytes = 0;
    const commands: Record<string, { calls: number; usec: number }> = {};
    for (const text of texts) {
      const f = fields(text);
      cpuMs += (Number(f.used_cpu_user ?? 0) + Number(f.used_cpu_sys ?? 0)) * 1_000;
      usedMemoryBytes += Number(f.used_memory ?? 0);
      for (const [k, v] of Object.entries(f)) {
        if (!k.startsWith('cmdstat_')) continue;
        const calls = Number(/calls=(\d+)/.exec(v)?.[1] ?? 0);
        const usec = Number(/usec=(\d+)/.exec(v)?.[1] ?? 0);
        const name = k.slice('cmdstat_'.length);
        const prev = commands[name] ?? { calls: 0, usec: 0 };
        commands[name] = { calls: prev.calls + calls, usec: prev.usec + usec };
      }
    }
    return { cpuMs, usedMemoryBytes, commands };
  }

  close(): void {
    for (const c of this.clients) c.disconnect();
  }
}

/** `a - b` for one command, or for several summed. */
export function commandDelta(
  a: RedisReading,
  b: RedisReading,
  names: readonly string[],
): { calls: number; usec: number } {
  let calls = 0;
  let usec = 0;
  for (const n of names) {
    calls += (a.commands[n]?.calls ?? 0) - (b.commands[n]?.calls ?? 0);
    usec += (a.commands[n]?.usec ?? 0) - (b.commands[n]?.usec ?? 0);
  }
  return { calls, usec };
}

function fields(info: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of info.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0 && !line.startsWith('#')) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}
