/**
 * What a token may do. `orders:read` reads the caller's own orders; `orders:read:any`
 * reads every order (support staff, the load test); `orders:write` publishes.
 */
export enum Scope {
  OrdersRead = 'orders:read',
  OrdersReadAny = 'orders:read:any',
  OrdersWrite = 'orders:write',
}

export const SCOPES: readonly Scope[] = Object.values(Scope);

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

/**
 * Scopes from a token's claims: `scope` as a space-separated string (RFC 8693 section
 * 4.2, what OAuth servers issue) or `scp` as an array (what some identity providers
 * use). Unknown scopes are ignored, never an error: a token may carry scopes meant for
 * other services.
 */
export function scopesFromClaims(claims: { scope?: unknown; scp?: unknown }): ReadonlySet<Scope> {
  const raw: unknown[] = [];
  if (typeof claims.scope === 'string') raw.push(...claims.scope.split(' '));
  if (Array.isArray(claims.scp)) raw.push(...(claims.scp as unknown[]));
  return new Set(raw.filter(isScope));
}
