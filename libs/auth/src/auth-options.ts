/**
 * The demo signing secret, public on purpose so `npm start` and curl work with no setup.
 * Production (NODE_ENV=production) refuses to start with it (see docs/security.md).
 */
export const DEMO_HS256_SECRET = 'order-status-demo-secret-do-not-use-in-production';

/** @default 'order-status-demo' */
export const DEFAULT_ISSUER = 'order-status-demo';
/** @default 'order-status' */
export const DEFAULT_AUDIENCE = 'order-status';
/** @default 5 s of clock skew tolerated on exp and nbf */
export const DEFAULT_CLOCK_TOLERANCE_S = 5;
/** @default RS256 and ES256: the asymmetric algorithms accepted for JWKS keys */
export const DEFAULT_JWKS_ALGORITHMS: readonly AsymmetricAlgorithm[] = ['RS256', 'ES256'];
/** HS256 secrets shorter than this are refused (RFC 7518 section 3.2: key >= hash size). */
export const MIN_HS256_SECRET_BYTES = 32;

export type AsymmetricAlgorithm = 'RS256' | 'ES256';
export const ASYMMETRIC_ALGORITHMS: readonly AsymmetricAlgorithm[] = ['RS256', 'ES256'];

/** A JSON Web Key Set as read from a file. */
export interface JsonWebKeySet {
  readonly keys: readonly Record<string, unknown>[];
}

export interface TokenVerifierOptions {
  /** HS256 secret (the demo); tokens with alg HS256 verify against it only. */
  hs256Secret?: string;
  /** A JWKS for RS256/ES256 tokens, given inline (read from AUTH_JWKS_FILE)... */
  jwks?: JsonWebKeySet;
  /** ...or fetched (and cached, refetched on an unknown kid) from this URL. */
  jwksUrl?: string;
  /** Algorithms accepted for JWKS keys. @default ['RS256', 'ES256'] */
  jwksAlgorithms?: readonly AsymmetricAlgorithm[];
  /** Required `iss`. @default 'order-status-demo' */
  issuer?: string;
  /** Required `aud` (one of). @default 'order-status' */
  audience?: string;
  /** Seconds of clock skew tolerated on exp and nbf. @default 5 */
  clockToleranceS?: number;
  /**
   * Estimated bytes of recently verified tokens remembered (`verifiedEntryBytes`), the
   * least recently used forgotten first. @default DEFAULT_VERIFIED_TOKENS_MAX_BYTES (16 MiB)
   */
  verifiedMaxBytes?: number;
}
