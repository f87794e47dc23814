import 'reflect-metadata';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OrderStatus, type OrderStatusChanged } from '@app/contracts';
import { OrderStore, type OrderStore as Store } from '@app/event-bus';
import { loadConfig } from '../../apps/order-status/src/config/app-config';
import { startApp, type RunningApp } from '../../apps/order-status/src/bootstrap';
import type { ClaimsOptions } from '../../libs/auth/src/testing/token-fixtures';
import { bearer, DEFAULT_TEST_TOKEN, testAuthEnv, testToken } from './auth';

export interface TestApp extends RunningApp {
  readonly store: Store;
  readonly httpUrl: string;
  readonly httpsUrl: string;
  readonly grpcAddress: string;
  /** Publishes through the store, as the REST/gRPC publish APIs do. */
  publish(orderId: string, status: OrderStatus, paddingBytes?: number): Promise<OrderStatusChanged>;
  /** Creates an order and moves it through `statuses` (after `created`). */
  createOrder(orderId: string, ...statuses: OrderStatus[]): Promise<OrderStatusChanged[]>;
  /** Creates an order owned by `ownerId` (a customer's token subject). */
  createOwnedOrder(
    orderId: string,
    ownerId: string,
    ...statuses: OrderStatus[]
  ): Promise<OrderStatusChanged[]>;
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
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
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
  const running = await startApp(config);
  const store = running.app.get(OrderStore);
  const publish = (orderId: string, status: OrderStatus, paddingBytes?: number) =>
    store.publish({ orderId, status, paddingBytes });
  return {
    ...running,
    store,
    httpUrl: `http://127.0.0.1:${running.ports.http}`,
    httpsUrl: `https://127.0.0.1:${running.ports.https}`,
    grpcAddress: `127.0.0.1:${running.ports.grpc}`,
    publish,
    createOrder: async (orderId, ...statuses) => {
      const out = [await publish(orderId, OrderStatus.Created)];
      for (const s of statuses) out.push(await publish(orderId, s));
      return out;
    },
    createOwnedOrder: async (orderId, ownerId, ...statuses) => {
      const out = [await store.publish({ orderId, status: OrderStatus.Created, ownerId })];
      for (const s of statuses) out.push(await publish(orderId, s));
      return out;
    },
    token: (o = {}) => testToken(o),
    defaultToken: DEFAULT_TEST_TOKEN,
    authHeaders: bearer(),
  };
}
