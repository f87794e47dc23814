import { DEMO_HS256_SECRET, Scope, signDevToken } from '@app/auth';
import { createConnector } from '../clients/connector-factory';
import { RenewingConnector } from '../clients/renewing-connector';
import { RunMetrics, Subscriber } from '../clients/subscriber';
import type { Connector, TransportName } from '../clients/transport';
import { orderId } from '../service/admin';
import type { RunningService } from '../service/launcher';
import { SOAK_DROP_ONE_IN, SOAK_LATENCY_STRIDE, SOAK_MAX_RECONNECTS } from './soak-plan';

/** One transport's share of a soak: its subscribers, their metrics and connector. */
export interface SoakGroup {
  readonly transport: TransportName;
  readonly connector: Connector;
  readonly metrics: RunMetrics;
  readonly subscribers: Subscriber[];
}

/**
 * A short-lived subscriber token signed with the public demo secret, as the service's
 * demo banner's token is (`npm run token` makes the same): read any order, no publishing.
 */
export function subscriberToken(ttlS: number): Promise<string> {
  return signDevToken({
    subject: 'soak',
    scopes: [Scope.OrdersReadAny],
    ttlS,
    secret: DEMO_HS256_SECRET,
  });
}

/**
 * The subscribers of a soak, transports interleaved so that every order has some of
 * each: subscriber i follows order `i mod orders` over transport `i div orders mod T`.
 * With `token` undefined (a --target not in demo mode) they present `fixedToken` and no
 * renewal happens.
 */
export function soakGroups(
  service: RunningService,
  transports: readonly TransportName[],
  prefix: string,
  plan: { subscribers: number; orders: number },
  token: { renewable: string } | { fixed: string | undefined },
): SoakGroup[] {
  const groups = transports.map((transport): SoakGroup => {
    const make = (t: string | undefined): Connector =>
      createConnector(transport, {
        host: service.host,
        httpPort: service.httpPort,
        httpsPort: service.httpsPort,
        grpcPort: service.grpcPort,
        token: t,
      });
    const connector =
      'renewable' in token ? new RenewingConnector(make, token.renewable) : make(token.fixed);
    return { transport, connector, metrics: new RunMetrics(), subscribers: [] };
  });
  for (let i = 0; i < plan.subscribers; i += 1) {
    const g = groups[Math.floor(i / plan.orders) % groups.length];
    g.subscribers.push(
      new Subscriber(orderId(prefix, (i % plan.orders) + 1), 0, g.connector, g.metrics, {
        maxReconnects: SOAK_MAX_RECONNECTS,
        measureLatency: i % SOAK_LATENCY_STRIDE === 0,
      }),
    );
  }
  return groups;
}

/** Renews every group's token (new streams present the new one). */
export async function renewTokens(groups: readonly SoakGroup[], token: string): Promise<void> {
  const renewing = groups.flatMap((g) =>
    g.connector instanceof RenewingConnector ? [g.connector] : [],
  );
  await Promise.all(renewing.map((c) => c.renew(token)));
}

/**
 * Drops one subscriber in SOAK_DROP_ONE_IN of every group (a random residue, so a
 * different tenth each time) and resumes each from its last seq; returns how many.
 */
export function dropATenth(groups: readonly SoakGroup[]): number {
  const residue = Math.floor(Math.random() * SOAK_DROP_ONE_IN);
  let dropped = 0;
  for (const g of groups) {
    for (let i = residue; i < g.subscribers.length; i += SOAK_DROP_ONE_IN) {
      g.subscribers[i].forceReconnect();
      dropped += 1;
    }
  }
  return dropped;
}
