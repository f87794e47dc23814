import { ErrorCode, GatewayError } from '@app/contracts';
import { AuthFailure, orderNotFound } from './auth-failure';
import type { Principal } from './principal';
import { Scope } from './scopes';

/**
 * Whether the principal may read orders at all (`orders:read` or `orders:read:any`);
 * checked before the order is looked up, so a token without either learns nothing about
 * which orders exist. @throws GatewayError PermissionDenied.
 */
export function assertMayRead(principal: Principal): void {
  const { scopes } = principal;
  if (scopes.has(Scope.OrdersReadAny) || scopes.has(Scope.OrdersRead)) return;
  throw new GatewayError(ErrorCode.PermissionDenied, `token lacks scope ${Scope.OrdersRead}`);
}

/**
 * The per-order decision every transport makes on every subscribe and every resume:
 * the order's owner, or a holder of `orders:read:any`. "Who are you" failures are
 * Unauthenticated and happen before this. Someone else's order is NotFound, exactly as
 * an order that does not exist (`orderNotFound`), so a customer cannot probe which ids
 * exist; metrics still count it as `forbidden`. An order without an owner (published
 * before ownership existed, or by a store that does not keep it) is readable with
 * `orders:read:any` only.
 * @throws GatewayError PermissionDenied (no read scope), NotFound (not yours).
 */
export function authorizeRead(
  principal: Principal,
  orderId: string,
  ownerId: string | undefined,
): void {
  assertMayRead(principal);
  if (principal.scopes.has(Scope.OrdersReadAny)) return;
  if (ownerId === undefined || ownerId !== principal.subject) {
    throw orderNotFound(orderId, true);
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
    throw new AuthFailure(ErrorCode.Unauthenticated, 'token expired', 'expired');
  }
}
