/**
 * Token forging for tests: synchronous JWS signing with node:crypto, so tests can build
 * every token the verifier must refuse (alg none, HS256 keyed with the RSA public key,
 * wrong signature, ...), which a well-behaved library like jose will not produce.
 * Not exported from the library's index.
 */
import { createHmac, generateKeyPairSync, sign as cryptoSign, type KeyObject } from 'node:crypto';
import type { JsonWebKeySet } from '../auth-options';

export const TEST_SECRET = 'test-secret-for-order-status-e2e-0123456789';
export const TEST_ISSUER = 'order-status-test';
export const TEST_AUDIENCE = 'order-status';

export type TestAlg = 'HS256' | 'RS256' | 'ES256' | 'none';

export interface TestKeys {
  readonly rsaPrivate: KeyObject;
  readonly rsaPublicPem: string;
  readonly ecPrivate: KeyObject;
  readonly jwks: JsonWebKeySet;
}

let keys: TestKeys | undefined;

/** An RSA and an EC key pair, and the JWKS of their public halves, each key pinned to its alg. */
export function testKeys(): TestKeys {
  if (keys) return keys;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  keys = {
    rsaPrivate: rsa.privateKey,
    rsaPublicPem: rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    ecPrivate: ec.privateKey,
    jwks: {
      keys: [
        { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'rsa-1', alg: 'RS256', use: 'sig' },
        { ...ec.publicKey.export({ format: 'jwk' }), kid: 'ec-1', alg: 'ES256', use: 'sig' },
      ],
    },
  };
  return keys;
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** Signs `claims` as a compact JWS with `alg`; `key` is the HMAC secret for HS256. */
export function forgeToken(
  claims: Record<string, unknown>,
  alg: TestAlg = 'HS256',
  key: string | KeyObject = TEST_SECRET,
  header: Record<string, unknown> = {},
): string {
  const kid = alg === 'RS256' ? 'rsa-1' : alg === 'ES256' ? 'ec-1' : undefined;
  const input = `${b64({ alg, typ: 'JWT', ...(kid ? { kid } : {}), ...header })}.${b64(claims)}`;
  let signature = '';
  if (alg === 'HS256') signature = createHmac('sha256', key).update(input).digest('base64url');
  if (alg === 'RS256')
    signature = cryptoSign('sha256', Buffer.from(input), key).toString('base64url');
  if (alg === 'ES256') {
    signature = cryptoSign('sha256', Buffer.from(input), {
      key: key as KeyObject,
      dsaEncoding: 'ieee-p1363',
    }).toString('base64url');
  }
  return `${input}.${signature}`;
}

export interface ClaimsOptions {
  readonly sub?: string;
  readonly scopes?: readonly string[];
  /** Seconds from now. @default 3600 */
  readonly ttlS?: number;
}

/** Valid claims for the test issuer and audience. */
export function testClaims(o: ClaimsOptions = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    sub: o.sub ?? 'support',
    iss: TEST_ISSUER,
    aud: TEST_AUDIENCE,
    iat: now,
    exp: now + (o.ttlS ?? 3600),
    scope: (o.scopes ?? ['orders:read:any', 'orders:write']).join(' '),
  };
}

/**
 * Every kind of token the issue says must be refused, by name, for a subject that would
 * otherwise be allowed. Built fresh each call (exp/nbf are relative to now).
 */
export function rejectedTokens(sub = 'support'): Record<string, string | undefined> {
  const ok = testClaims({ sub });
  const now = Math.floor(Date.now() / 1000);
  const { exp: _exp, ...noExp } = ok;
  return {
    'no token': undefined,
    'malformed token': 'not-a-jwt',
    'wrong signature': forgeToken(ok, 'HS256', 'another-secret-another-secret-another-secret'),
    'alg none': forgeToken(ok, 'none'),
    'HS256 signed with the RSA public key': forgeToken(ok, 'HS256', testKeys().rsaPublicPem),
    expired: forgeToken({ ...ok, exp: now - 3600 }),
    'nbf in the future': forgeToken({ ...ok, nbf: now + 3600 }),
    'wrong aud': forgeToken({ ...ok, aud: 'someone-else' }),
    'wrong iss': forgeToken({ ...ok, iss: 'https://evil.example' }),
    'no exp': forgeToken(noExp),
  };
}
