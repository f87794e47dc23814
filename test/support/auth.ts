import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  forgeToken,
  TEST_AUDIENCE,
  TEST_ISSUER,
  TEST_SECRET,
  testClaims,
  testKeys,
  type ClaimsOptions,
} from '../../libs/auth/src/testing/token-fixtures';

export {
  forgeToken,
  rejectedTokens,
  testClaims,
  testKeys,
} from '../../libs/auth/src/testing/token-fixtures';

/**
 * The "support / load test" principal every existing e2e test acts as: it may read any
 * order and publish. Valid for hours, so no test run outlives it.
 */
export const DEFAULT_SUBJECT = 'support';
export const DEFAULT_TEST_TOKEN = testToken({ sub: DEFAULT_SUBJECT, ttlS: 6 * 3600 });

/** An HS256 token for the test service (signed with its configured secret). */
export function testToken(o: ClaimsOptions = {}): string {
  return forgeToken(testClaims(o));
}

/** `{ authorization: 'Bearer <token>' }`. */
export function bearer(token: string = DEFAULT_TEST_TOKEN): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

/**
 * Adds the default bearer token to request headers unless the caller set `authorization`
 * itself; an empty `authorization` means "send none" (tests of missing credentials).
 */
export function withAuth(headers: Record<string, string> = {}): Record<string, string> {
  if (!('authorization' in headers)) return { ...bearer(), ...headers };
  if (headers.authorization !== '') return headers;
  const { authorization: _omit, ...rest } = headers;
  return rest;
}

let jwksFile: string | undefined;

/** The environment that points a test service at the test secret and test JWKS. */
export function testAuthEnv(): Record<string, string> {
  if (jwksFile === undefined) {
    jwksFile = join(tmpdir(), `order-status-test-jwks-${process.pid}.json`);
    writeFileSync(jwksFile, JSON.stringify(testKeys().jwks));
  }
  return {
    AUTH_HS256_SECRET: TEST_SECRET,
    AUTH_ISSUER: TEST_ISSUER,
    AUTH_AUDIENCE: TEST_AUDIENCE,
    AUTH_JWKS_FILE: jwksFile,
  };
}
