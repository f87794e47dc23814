import { readProcStat } from '../sampling/proc-stat';
import { promValue } from '../sampling/prom-text';
import type { AdminClient } from '../service/admin';
import type { RunningService } from '../service/launcher';

/** The gauges that must return to zero once every client is gone. */
export const ZERO_GAUGES = ['order_transport_connections', 'order_bus_subscribers'] as const;

export interface Gauges {
  readonly order_transport_connections: number;
  readonly order_bus_subscribers: number;
}

export function alive(service: RunningService): boolean {
  if (service.exitInfo?.() !== undefined) return false;
  if (service.pid === undefined) return true;
  try {
    process.kill(service.pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function rssBytes(service: RunningService): number | undefined {
  return service.pid === undefined ? undefined : readProcStat(service.pid)?.rssBytes;
}

/** The zero-gauges summed over their labels; undefined when /metrics does not answer. */
export async function readGauges(admin: AdminClient): Promise<Gauges | undefined> {
  const samples = await admin.metrics();
  if (samples === undefined) return undefined;
  return {
    order_transport_connections: promValue(samples, 'order_transport_connections') ?? 0,
    order_bus_subscribers: promValue(samples, 'order_bus_subscribers') ?? 0,
  };
}

/** Polls until both gauges read 0 or `timeoutMs` passes; returns the last reading and when. */
export async function waitForZeroGauges(
  admin: AdminClient,
  timeoutMs: number,
): Promise<{ gauges: Gauges | undefined; afterMs: number }> {
  const start = performance.now();
  let gauges: Gauges | undefined;
  for (;;) {
    gauges = await readGauges(admin).catch(() => undefined);
    const zero = gauges !== undefined && ZERO_GAUGES.every((g) => gauges?.[g] === 0);
    if (zero || performance.now() - start > timeoutMs) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { gauges, afterMs: Math.round(performance.now() - start) };
}
