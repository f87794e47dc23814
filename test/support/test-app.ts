import 'reflect-metadata';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  acceptsTracking,
  OrderStatus,
  publishStatus,
  publishTracking,
  type OrderEvent,
  type OrderSnapshot,
  type OrderStatusChanged,
  type TrackingUpdated,
} from '@app/order-domain';
import { StreamStore } from '@app/store';

/** The store of a service that carries the order domain. */
type Store = StreamStore<OrderEvent, OrderSnapshot>;
import { loadConfig } from '../../apps/order-status/src/config/app-config';
import { startApp, type RunningApp } from '../../apps/order-status/src/bootstrap';
import type { ClaimsOptions } from '../../libs/auth/src/testing/token-fixtures';
import { bearer, DEFAULT_TEST_TOKEN, testAuthEnv, testToken } from './auth';

/** One step of a scripted order: a status change, or a tracking update. */
export type Step = OrderStatus | 'tracking';

export interface TestApp extends RunningApp {
  readonly store: Store;
  readonly httpUrl: string;
  readonly httpsUrl: string;
  readonly grpcAddress: string;
  /** Publishes through the store, as the REST/gRPC publish APIs do. */
  publish(orderId: string, status: OrderStatus): Promise<OrderStatusChanged>;
  /**
   * Publishes the order's next event without finishing it: the next status up to
   * `shipped`, then tracking updates. One event (one seq) per call, so a test can make
   * as many events as it needs, as the simulator's steady schedule does.
   */
  progress(orderId: string): Promise<OrderEvent>;
  /** Publishes a tracking update (the order must be shipped or out for delivery). */
  track(orderId: string): Promise<TrackingUpdated>;
  /**
   * Creates an order and moves it through `steps` (after `created`): statuses, or
   * `'tracking'` for a tracking update (once the order is shipped).
   */
  createOrder(orderId: string, ...steps: Step[]): Promise<OrderEvent[]>;
  /** Creates an order owned by `ownerId` (a customer's token subject). */
  createOwnedOrder(orderId: string, ownerId: string, ...steps: Step[]): Promise<OrderEvent[]>;
  /** Mints a token the service accepts (default: subject `support`, read:any + write). */
  token(o?: ClaimsOptions): string;
  /** The default "support / load test" token every helper sends unless told otherwise. */
  readonly defaultToken: string;
  /** `{ authorization: 'Bearer <defaultToken>' }`. */
  readonly authHeaders: { readonly authorization: string };
}

/** One certificate directory for the whole run: generated once, reused by every worker. */
export const TEST_CERT_DIR = join(tmpdir(), 'order-status-test-certs');

/**
 * Starts the real service on free ports (HTTP/1.1, TLS h2+h1, gRPC), simulator off,
 * quiet logs. `env` overrides any configuration variable, exactly as in production.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  /** A store made by the test (startApp's own option), instead of the one `env` selects. */
  opts: { readonly store?: Store } = {},
): Promise<TestApp> {
  const config = loadConfig({
    HTTP_PORT: '0',
    HTTPS_PORT: '0',
    GRPC_PORT: '0',
    SIMULATOR_ENABLED: 'false',
    LOG_LEVEL: 'silent',
    TLS_DEV_CERT_DIR: TEST_CERT_DIR,
    // The test secret and a test JWKS (RS256 + ES256), so tests can mint any token.
    ...testAuthEnv(),
    ...env,
  });
  const running = await startApp(config, opts.store ? { store: opts.store } : {});
  // The service under test carries the order domain (the default STREAM_DOMAIN).
  const store = running.app.get<Store>(StreamStore);
  const publish = (orderId: string, status: OrderStatus) =>
    publishStatus(store, { orderId, status });
  let tracked = 0;
  const track = (orderId: string) =>
    publishTracking(store, { orderId, ...testTracking(++tracked) });
  return {
    ...running,
    store,
    httpUrl: `http://127.0.0.1:${running.ports.http}`,
    httpsUrl: `https://127.0.0.1:${running.ports.https}`,
    grpcAddress: `127.0.0.1:${running.ports.grpc}`,
    publish,
    track,
    progress: async (orderId) => {
      const status = (await store.getSnapshot(orderId))?.status;
      if (status !== undefined && acceptsTracking(status)) return track(orderId);
      return publish(orderId, towardShipped(status));
    },
    createOrder: async (orderId, ...steps) => {
      const out: OrderEvent[] = [await publish(orderId, OrderStatus.Created)];
      for (const s of steps)
        out.push(await (s === 'tracking' ? track(orderId) : publish(orderId, s)));
      return out;
    },
    createOwnedOrder: async (orderId, ownerId, ...steps) => {
      const out: OrderEvent[] = [
        await publishStatus(store, { orderId, status: OrderStatus.Created, ownerId }),
      ];
      for (const s of steps)
        out.push(await (s === 'tracking' ? track(orderId) : publish(orderId, s)));
      return out;
    },
    token: (o = {}) => testToken(o),
    defaultToken: DEFAULT_TEST_TOKEN,
    authHeaders: bearer(),
  };
}

/** The status after `status` on the way to `shipped` (where tracking updates begin). */
function towardShipped(status: OrderStatus | undefined): OrderStatus {
  switch (status) {
    case undefined:
      return OrderStatus.Created;
    case OrderStatus.Created:
      return OrderStatus.Paid;
    case OrderStatus.Paid:
      return OrderStatus.Packed;
    default:
      return OrderStatus.Shipped;
  }
}

/** The n-th test tracking update: a position that moves a little, an ETA an hour ahead. */
export function testTracking(n: number): { location: { lat: number; lon: number }; etaMs: number } {
  return {
    location: { lat: 48 + (n % 100) / 1000, lon: 11 + (n % 100) / 1000 },
    etaMs: Date.now() + 3_600_000,
  };
}
