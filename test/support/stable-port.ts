import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Where Linux starts handing out ports for `listen(0)` and for a client's own end. */
export function ephemeralPortFloor(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/);
    return Number(low) || 32_768;
  } catch {
    return 32_768;
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free loopback port below the ephemeral range, for a test that needs a port to stay
 * refused (a client that cannot connect) or to get the same port back (a server restarted
 * where its clients reconnect). A port the system gave out and took back can go to another
 * process's `listen(0)` meanwhile (CI runs two Jest processes at once): the client then
 * sees a reset, or the restart fails with EADDRINUSE. A port bound once and kept needs
 * none of this: `freePorts` (deploy/stack/free-ports.ts) picks those.
 */
export async function stablePort(): Promise<number> {
  const floor = ephemeralPortFloor();
  const first = 10_000;
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = first + Math.floor(Math.random() * (floor - first));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free loopback port found in ${first}-${floor - 1}`);
}

/** `count` different ports as `stablePort` gives them. */
export async function stablePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  for (let tries = 0; ports.size < count && tries < count * 10; tries++) {
    ports.add(await stablePort());
  }
  if (ports.size < count) throw new Error(`only ${ports.size} of ${count} stable ports found`);
  return [...ports];
}
