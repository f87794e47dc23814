import { comparedServers, serverLabel } from './peers';
import { runTransport } from './run-transport';
import { steadyLoad } from './steady';
import { perTransport, type Scenario } from './scenario';

export const OVERHEAD_TRANSPORTS = [
  'grpc',
  'sse',
  'ws',
  'websocket',
  'longpoll',
  'longpoll-h2',
] as const;

/**
 * Rounds of (Nest, bare) runs per transport. One pair is not enough: on a quiet host
 * the same pair's CPU per event moved by 20-40 % between suite runs (JIT and GC timing
 * of a fresh process), which is more than the +25 % the comparison is about. The
 * verdict takes the median of each side; alternating the two spreads any drift of the
 * host over both.
 */
export const OVERHEAD_ROUNDS = 3;

/**
 * The same steady load against the Nest service and against a bare Node server with the
 * same wire format (loadtest/src/bare), so the difference in service CPU per 1,000 events
 * and RSS is what the framework (and the service's bus, queues and guards) costs. Nchan
 * (nginx, C) stands beside them for SSE, long-poll and WebSocket when installed, and the
 * bare long-poll servers (h1 and h2) are the floor of long-poll's cost per poll.
 */
export const overhead: Scenario = {
  name: 'overhead',
  description: 'the same load on the Nest service and on a bare Node server',
  supports: (t) => (OVERHEAD_TRANSPORTS as readonly string[]).includes(t),
  run: (ctx, o) =>
    perTransport(ctx, o.transports.filter(overhead.supports), async (transport) => {
      const out = [];
      const rounds = o.rounds ?? (o.tiny ? 1 : OVERHEAD_ROUNDS);
      const servers = comparedServers(ctx, 'overhead', transport);
      for (let round = 1; round <= rounds && !ctx.aborted(); round += 1) {
        for (const server of servers) {
          const r = await runTransport(ctx, {
            scenario: 'overhead',
            variant: serverLabel(server, transport),
            server,
            transport,
            ...steadyLoad(o, { subscribers: 500, durationS: 6 }, transport),
          });
          out.push({ ...r, extra: { ...r.extra, round } });
        }
      }
      return out;
    }),
};
