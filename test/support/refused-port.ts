import { readFileSync } from 'node:fs';
import { connect } from 'node:net';

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

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/**
 * A loopback port that refuses connections and keeps refusing, for tests of a client that
 * cannot connect. It lies below the ephemeral range: a port the system gave out and took
 * back can go to another process's `listen(0)` or become a connecting client's own end
 * (a TCP connection to itself), and the client under test then sees a reset or an answer.
 */
export async function refusedPort(): Promise<number> {
  const floor = ephemeralPortFloor();
  const first = 10_000;
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = first + Math.floor(Math.random() * (floor - first));
    if (await refuses(port)) return port;
  }
  throw new Error(`no refusing loopback port found in ${first}-${floor - 1}`);
}
