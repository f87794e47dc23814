import { ErrorCode, GatewayError } from '@app/contracts';
import type { Principal } from './principal';
import { Scope } from './scopes';

/**
 * The per-order decision every transport makes on every subscribe and every resume:
 * the order's owner, or a holder of `orders:read:any`. "Who are you" failures are
 * Unauthenticated and happen before this; this only says "not yours" (PermissionDenied).
 * An order without an owner (published before ownership existed, or by a store that does
 * not keep it) is readable with `orders:read:any` only.
 */
export function authorizeRead(
  principal: Principal,
  orderId: string,
  ownerId: string | undefined,
): void {
  const { scopes } = principal;
  if (scopes.has(Scope.OrdersReadAny)) return;
  if (!scopes.has(Scope.OrdersRead)) {
    throw new GatewayError(ErrorCode.PermissionDenied, `token lacks scope ${Scope.OrdersRead}`);
  }
  if (ownerId === undefined || ownerId !== principal.subject) {
    throw new GatewayError(ErrorCode.PermissionDenied, `not permitted to read order ${orderId}`);
  }
}

/** Publishing (and the simulator's admin routes) needs `orders:write`. */
export function authorizeWrite(principal: Principal): void {
  if (!principal.scopes.has(Scope.OrdersWrite)) {
    throw new GatewayError(ErrorCode.PermissionDenied, `token lacks scope ${Scope.OrdersWrite}`);
  }
}

/**
 * Who owns an order created by this publish: the explicit owner when given (a back
 * office creating an order for a customer), else the caller itself. Only reached with
 * `orders:write` (authorizeWrite first).
 */
export function ownerForNewOrder(principal: Principal, requested: string | undefined): string {
  return requested !== undefined && requested.length > 0 ? requested : principal.subject;
}

/** Credentials that have already expired (a socket kept open past its token). */
export function assertNotExpired(principal: Principal, nowMs = Date.now()): void {
  if (principal.expiresAtMs <= nowMs) {
    throw new GatewayError(ErrorCode.Unauthenticated, 'token expired');
  }
}
