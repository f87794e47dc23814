import { request } from 'undici';
import { bearer } from '../../support/auth';
import { waitFor } from '../../support/wait-for';

/** The per-transport gauges that must return to their baseline after hostile clients. */
export interface Gauges {
  /** `order_transport_connections{transport}`: open client connections. */
  readonly connections: Readonly<Record<string, number>>;
  /** `order_bus_subscribers{transport}`: open bus subscriptions. */
  readonly subscribers: Readonly<Record<string, number>>;
}

/** Scrapes `/metrics` and reads both gauges (a missing label reads as 0). */
export async function readGauges(httpUrl: string): Promise<Gauges> {
  const res = await request(`${httpUrl}/metrics`, { headers: bearer() });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`/metrics answered ${res.statusCode}`);
  return {
    connections: byTransport(text, 'order_transport_connections'),
    subscribers: byTransport(text, 'order_bus_subscribers'),
  };
}

function byTransport(text: string, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  const re = new RegExp(`^${name}\\{transport="([^"]+)"\\} (\\d+)$`, 'gm');
  for (const m of text.matchAll(re)) out[m[1]] = Number(m[2]);
  return out;
}

/** 0 for a transport the gauge has no sample for. */
export function of(values: Readonly<Record<string, number>>, transport: string): number {
  return values[transport] ?? 0;
}

/**
 * Waits (bounded) until both gauges of `transport` equal `expected`, and fails with the
 * last values seen: a leak shows as the count that never came down.
 */
export async function gaugesBackTo(
  httpUrl: string,
  transport: string,
  expected: { connections: number; subscribers: number },
  timeoutMs: number,
): Promise<void> {
  let last: Gauges | undefined;
  try {
    await waitFor(
      async () => {
        last = await readGauges(httpUrl);
        return (
          of(last.connections, transport) === expected.connections &&
          of(last.subscribers, transport) === expected.subscribers
        );
      },
      `${transport} gauges back to ${JSON.stringify(expected)}`,
      timeoutMs,
      100,
    );
  } catch (err) {
    const seen = last
      ? {
          connections: of(last.connections, transport),
          subscribers: of(last.subscribers, transport),
        }
      : 'no scrape';
    throw new Error(`${(err as Error).message}; last seen ${JSON.stringify(seen)}`);
  }
}
