import { Counter, Gauge, type Registry } from 'prom-client';
import type { MemoryUse } from '@app/contracts';

/** Where the bounded structures' figures come from; read at scrape time. */
export type MemorySource = () => readonly MemoryUse[];

/**
 * `order_memory_*{structure}`: each in-process structure a client can grow (idempotency
 * keys, stream tickets, rate windows, verified tokens, socket.io subscriptions), its
 * estimated bytes against its bound, and what the bound cost (evictions for caches,
 * refusals for stores that keep a promise). Returns how to add a source.
 */
export function registerMemoryMetrics(registry: Registry): (source: MemorySource) => void {
  const sources: MemorySource[] = [];
  const uses = () => sources.flatMap((s) => s());
  const registers = [registry];
  const labelNames = ['structure'];
  const gauge = (name: string, help: string, read: (u: MemoryUse) => number) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const u of uses()) this.set({ structure: u.structure }, read(u));
      },
    });
  const counter = (name: string, help: string, read: (u: MemoryUse) => number) =>
    new Counter({
      name,
      help,
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const u of uses()) this.inc({ structure: u.structure }, read(u));
      },
    });
  gauge(
    'order_memory_bytes',
    'Estimated heap bytes held by a structure clients can grow, by structure',
    (u) => u.bytes,
  );
  gauge(
    'order_memory_max_bytes',
    'The byte bound of that structure (MEMORY_*_MAX_BYTES), by structure',
    (u) => u.maxBytes,
  );
  gauge('order_memory_entries', 'Entries held by that structure, by structure', (u) => u.entries);
  counter(
    'order_memory_evictions_total',
    'Entries a cache dropped to stay within its byte bound, by structure',
    (u) => u.evictions,
  );
  counter(
    'order_memory_refusals_total',
    'Requests refused because a structure was at its byte bound (429 with retry advice), by structure',
    (u) => u.refusals,
  );
  return (source) => sources.push(source);
}
