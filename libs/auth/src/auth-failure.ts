import { ErrorCode, GatewayError } from '@app/contracts';

/**
 * Why a request was refused for its credentials, as counted in metrics
 * (`order_auth_failures_total{reason}`). A small fixed set: every value is a time series.
 * - `missing`: no credentials at all;
 * - `invalid`: malformed, badly signed, wrong issuer/audience, unknown ticket, ...;
 * - `expired`: a token past its `exp` (at connect, or a socket kept open past it);
 * - `forbidden`: valid credentials, but not for this (lacking scope, someone else's order).
 */
export const AUTH_FAILURE_REASONS = ['missing', 'invalid', 'expired', 'forbidden'] as const;
export type AuthFailureReason = (typeof AUTH_FAILURE_REASONS)[number];

/**
 * A GatewayError that also says which auth failure it is, for metrics; the client sees
 * only the code and the message. A foreign order is NotFound to the client (so ids
 * cannot be probed) and `forbidden` to the operator.
 */
export class AuthFailure extends GatewayError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly reason: AuthFailureReason,
  ) {
    super(code, message);
    this.name = 'AuthFailure';
  }
}

/** The reason `err` counts as, or undefined when it is not an auth failure. */
export function authFailureReason(err: unknown): AuthFailureReason | undefined {
  if (err instanceof AuthFailure) return err.reason;
  if (!(err instanceof GatewayError)) return undefined;
  if (err.code === ErrorCode.Unauthenticated) return 'invalid';
  if (err.code === ErrorCode.PermissionDenied) return 'forbidden';
  return undefined;
}

/**
 * What a principal without `orders:read:any` gets for an order that does not exist and
 * for someone else's alike: the same code and the same message.
 */
export function orderNotFound(orderId: string, foreign: boolean): GatewayError {
  const message = `order ${orderId} not found`;
  return foreign
    ? new AuthFailure(ErrorCode.NotFound, message, 'forbidden')
    : new GatewayError(ErrorCode.NotFound, message);
}
