import { ErrorCode, GatewayError } from '@app/contracts';
import { AuthFailure } from './auth-failure';

/**
 * The token of an `Authorization: Bearer <token>` value (RFC 6750 section 2.1; the
 * scheme is case-insensitive). Undefined when there is no header at all; a header in any
 * other shape is an Unauthenticated error, not "anonymous".
 */
export function parseBearer(header: string | readonly string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = typeof header === 'string' ? header : header[0];
  const match =
    typeof value === 'string' ? /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(value) : null;
  if (!match) {
    throw new GatewayError(ErrorCode.Unauthenticated, 'authorization must be "Bearer <token>"');
  }
  return match[1];
}

export function missingCredentials(): GatewayError {
  return new AuthFailure(
    ErrorCode.Unauthenticated,
    'credentials required (Authorization: Bearer <token>)',
    'missing',
  );
}
