import { TRANSPORTS, type TransportName } from '../clients/transport';
import type { RunResult } from './result';
import { comparedServers, serverLabel } from './peers';
import { runTransport } from './run-transport';
import { defaultPayloadBytes } from './steady';
import { perTransport, type Scenario, warmupOf } from './scenario';

/** Every push transport: short-poll is the polling baseline, measured by other scenarios. */
export const BROADCAST_TRANSPORTS: readonly TransportName[] = TRANSPORTS.filter(
  (t) => t !== 'shortpoll',
);
export const DEFAULT_BROADCAST_SUBSCRIBERS = 2_000;
/**
 * Rounds of (service, bare, Nchan) per order count. Fewer than overhead's three: a round
 * is three order counts of 2,000 subscribers each; the per-round ratios are reported so
 * the spread is visible.
 */
export const BROADCAST_ROUNDS = 2;

/**
 * Every subscriber on one order, ten orders, one order each (the per-order case). The
 * smoke size runs the one-order case only: the per-order case is every other scenario's.
 */
export function broadcastOrderCounts(subscribers: number, tiny = false): number[] {
  return tiny ? [1] : [...new Set([1, Math.min(10, subscribers), subscribers])];
}

/**
 * N subscribers spread over K orders (subscriber i follows order i mod K) at R events/s
 * per order: deliveries are N x R whatever K is, while the events published are K x R,
 * so K = 1 is the broadcast case (one event, N writes) and K = N the per-order one. The
 * same load against the service, the bare Node server and Nchan, alternating, so the
 * comparison is CPU per delivery on one core each.
 */
export const broadcast: Scenario = {
  name: 'broadcast',
  description: 'N subscribers over 1, 10 and N orders: service, bare Node and Nchan',
  supports: (t) => BROADCAST_TRANSPORTS.includes(t),
  run: (ctx, o) =>
    perTransport(ctx, o.transports.filter(broadcast.supports), async (transport) => {
      const out: RunResult[] = [];
      const subscribers = o.subscribers ?? (o.tiny ? 4 : DEFAULT_BROADCAST_SUBSCRIBERS);
      const servers = comparedServers(ctx, 'broadcast', transport);
      const rounds = o.rounds ?? (o.tiny ? 1 : BROADCAST_ROUNDS);
      const orderCounts = (o.orders ?? broadcastOrderCounts(subscribers, o.tiny)).map((k) =>
        Math.min(k, subscribers),
      );
      for (let round = 1; round <= rounds && !ctx.aborted(); round += 1) {
        for (const orders of orderCounts) {
          for (const server of servers) {
            if (ctx.aborted()) break;
            const r = await runTransport(ctx, {
              scenario: 'broadcast',
              variant: `${orders} order${orders === 1 ? '' : 's'} ${serverLabel(server, transport)}`,
              server,
              transport,
              subscribers,
              orders,
              ratePerOrder: o.rate ?? 10,
              durationS: o.durationS ?? (o.tiny ? 1 : 5),
              warmupS: warmupOf(o),
              payloadBytes: o.payloadBytes ?? defaultPayloadBytes(transport),
            });
            out.push({ ...r, extra: { ...r.extra, round, orders } });
          }
        }
      }
      return out;
    }),
};
