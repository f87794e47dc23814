import { Scope, signDevToken } from '@app/auth';
import type { AppConfig } from '../config/app-config';
import type { AuthConfig } from '../config/auth-config';

/** @default 12 h: a demo session lasts an afternoon without minting another token */
export const DEMO_TOKEN_TTL_S = 12 * 3600;

/**
 * A token that reads any order and publishes, signed with the public demo secret;
 * undefined unless the service runs in demo mode (tokens then come from an identity
 * provider). The simulator's orders belong to customer-0..9, so this one sees them all.
 */
export async function demoToken(auth: AuthConfig): Promise<string | undefined> {
  if (!auth.demoSecret || !auth.hs256Secret) return undefined;
  return signDevToken({
    subject: 'demo',
    scopes: [Scope.OrdersReadAny, Scope.OrdersWrite],
    ttlS: DEMO_TOKEN_TTL_S,
    secret: auth.hs256Secret,
    issuer: auth.issuer,
    audience: auth.audience,
  });
}

/**
 * In demo mode (the public demo secret is in use) the service prints a ready token and
 * commands that work as pasted, so `npm start` + curl needs no identity provider. The
 * token reads any order (the simulator's orders belong to customer-0..9).
 */
export async function demoBanner(
  config: AppConfig,
  baseUrl: string,
  grpcAddress: string,
): Promise<string[]> {
  const token = await demoToken(config.auth);
  if (token === undefined) return [];
  return [
    'DEMO MODE: tokens are signed with the public demo secret (never use it in production).',
    `  export TOKEN=${token}`,
    `  curl -N -H "Authorization: Bearer $TOKEN" ${baseUrl}/v1/orders/order-1/stream`,
    `  curl -H "Authorization: Bearer $TOKEN" '${baseUrl}/v1/orders/order-1/events?after=0&wait=30'`,
    `  ORDER_STATUS_TOKEN=$TOKEN npm run -s grpc -- --url ${grpcAddress} Subscribe '{"order_id":"order-1"}'`,
    `  ORDER_STATUS_TOKEN=$TOKEN npm run watch -- order-1 --url ${baseUrl}`,
    '  A customer token (sees only its own orders):',
    '  npm run -s token -- --sub customer-1 --scope orders:read --ttl 1h',
  ];
}
