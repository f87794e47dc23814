import { ErrorCode, GatewayError } from '@app/contracts';
import { AuthFailure } from './auth-failure';

/**
 * The token of an `Authorization: Bearer <token>` value (RFC 6750 section 2.1; the
 * scheme is case-insensitive). Undefined when there is no header at all; a header in any
 * other shape is an Unauthenticated error, not "anonymous". Several values (the header
 * sent twice) are an InvalidArgument: Node keeps the first, a proxy may act on another,
 * and RFC 9110 section 5.3 allows a repeated field only for list-valued ones.
 */
export function parseBearer(header: string | readonly string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' && header.length > 1) {
    throw new GatewayError(ErrorCode.InvalidArgument, 'send one Authorization header, not several');
  }
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

/**
 * Every `Authorization` value of a request, from its raw header list (Node's `rawHeaders`:
 * name, value, name, value...), where a repeated header is still visible: Node's parsed
 * headers (HTTP/1.1 and HTTP/2 alike) keep only the first. A string when there is one.
 */
export function authorizationValues(
  rawHeaders: readonly string[],
): string | readonly string[] | undefined {
  let found: string | string[] | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name.length !== AUTHORIZATION.length || name.toLowerCase() !== AUTHORIZATION) continue;
    const value = rawHeaders[i + 1];
    found = found === undefined ? value : [...(typeof found === 'string' ? [found] : found), value];
  }
  return found;
}

const AUTHORIZATION = 'authorization';
