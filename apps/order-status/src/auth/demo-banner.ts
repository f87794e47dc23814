import { Scope, signDevToken } from '@app/auth';
import type { AppConfig } from '../config/app-config';

/** @default 12 h: a demo session lasts an afternoon without minting another token */
export const DEMO_TOKEN_TTL_S = 12 * 3600;

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
  const a = config.auth;
  if (!a.demoSecret || !a.hs256Secret) return [];
  const token = await signDevToken({
    subject: 'demo',
    scopes: [Scope.OrdersReadAny, Scope.OrdersWrite],
    ttlS: DEMO_TOKEN_TTL_S,
    secret: a.hs256Secret,
    issuer: a.issuer,
    audience: a.audience,
  });
  return [
    'DEMO MODE: tokens are signed with the public demo secret (never use it in production).',
    `  export TOKEN=${token}`,
    `  curl -N -H "Authorization: Bearer $TOKEN" ${baseUrl}/v1/orders/order-1/stream`,
    `  curl -H "Authorization: Bearer $TOKEN" '${baseUrl}/v1/orders/order-1/events?after=0&wait=30'`,
    `  grpcurl -plaintext -H "authorization: Bearer $TOKEN" -d '{"order_id":"order-1"}' ${grpcAddress} orderstatus.v1.OrderStatusService/Subscribe`,
    '  A customer token (sees only its own orders):',
    '  npm run -s token -- --sub customer-1 --scope orders:read --ttl 1h',
  ];
}
