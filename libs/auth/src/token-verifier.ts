import { createSecretKey, type KeyObject } from 'node:crypto';
import { ErrorCode, GatewayError } from '@app/contracts';
import { AuthFailure } from './auth-failure';
import {
  ASYMMETRIC_ALGORITHMS,
  DEFAULT_AUDIENCE,
  DEFAULT_CLOCK_TOLERANCE_S,
  DEFAULT_ISSUER,
  DEFAULT_JWKS_ALGORITHMS,
  MIN_HS256_SECRET_BYTES,
  type AsymmetricAlgorithm,
  type JsonWebKeySet,
  type TokenVerifierOptions,
} from './auth-options';
import {
  loadJose,
  type Jose,
  type JoseJwk,
  type JWTPayload,
  type JWTVerifyGetKey as GetKey,
} from './jose-loader';
import type { Principal } from './principal';
import { scopesFromClaims } from './scopes';

/** Longest token we parse at all; real JWTs are well under 2 KB. */
export const MAX_TOKEN_LENGTH = 8_192;
/** @default 10_000 verified tokens remembered (oldest forgotten first) */
export const VERIFIED_CACHE_ENTRIES = 10_000;
/** @default 60_000 ms a verification is reused, at most (and never past the token's exp) */
export const VERIFIED_CACHE_TTL_MS = 60_000;

/**
 * Verifies bearer tokens (JWS compact JWTs) with `jose` and turns them into a Principal.
 *
 * The algorithm is pinned per key, which is what defeats algorithm confusion:
 * - HS256 tokens verify against the configured secret, and nothing else;
 * - RS256/ES256 tokens verify against the JWKS, each key only for the `alg` it declares
 *   (JWKS files without `alg` on a key are refused at start-up);
 * - `alg: none` and every other algorithm are refused before any key is looked at.
 * So an HS256 token "signed" with the RSA public key (the classic confusion attack) is
 * checked against the HS256 secret and fails.
 *
 * Claims: `exp` and `sub` are required; `iss` and `aud` must match; `nbf` is honoured;
 * exp/nbf allow `clockToleranceS` of skew. Every failure is a GatewayError
 * Unauthenticated whose message says what was wrong, never the token itself.
 */
export class TokenVerifier {
  readonly issuer: string;
  readonly audience: string;
  readonly clockToleranceS: number;
  /** Every algorithm some key accepts. */
  readonly algorithms: readonly string[];
  private readonly secret?: KeyObject;
  private readonly jwks?: GetKey;
  private readonly remote: boolean;
  /**
   * Tokens verified recently. Polling clients present the same token on every request,
   * and a signature check per poll would dominate its cost. A hit is reused until the
   * token's own expiry,
   * and for at most VERIFIED_CACHE_TTL_MS, so a rotated-out JWKS key stops being honoured
   * within that bound. Only successes are cached.
   */
  private readonly verified = new Map<string, { principal: Principal; untilMs: number }>();

  /** Loads jose (an ES module, see jose-loader.ts) and builds the verifier. */
  static async create(opts: TokenVerifierOptions): Promise<TokenVerifier> {
    return new TokenVerifier(await loadJose(), opts);
  }

  private constructor(
    private readonly jose: Jose,
    opts: TokenVerifierOptions,
  ) {
    this.issuer = opts.issuer ?? DEFAULT_ISSUER;
    this.audience = opts.audience ?? DEFAULT_AUDIENCE;
    this.clockToleranceS = opts.clockToleranceS ?? DEFAULT_CLOCK_TOLERANCE_S;
    if (!(this.clockToleranceS >= 0)) throw new TypeError('clockToleranceS must be >= 0');
    const jwksAlgorithms = opts.jwksAlgorithms ?? DEFAULT_JWKS_ALGORITHMS;
    for (const alg of jwksAlgorithms) {
      if (!ASYMMETRIC_ALGORITHMS.includes(alg)) {
        throw new TypeError(
          `jwksAlgorithms: ${String(alg)} is not one of ${ASYMMETRIC_ALGORITHMS.join(', ')}`,
        );
      }
    }
    if (opts.hs256Secret !== undefined) {
      const bytes = Buffer.from(opts.hs256Secret, 'utf8');
      if (bytes.length < MIN_HS256_SECRET_BYTES) {
        throw new TypeError(`the HS256 secret must be at least ${MIN_HS256_SECRET_BYTES} bytes`);
      }
      // A KeyObject made once: given raw bytes, jose imports the key on every verify.
      this.secret = createSecretKey(bytes);
    }
    this.remote = opts.jwksUrl !== undefined && opts.jwks === undefined;
    if (opts.jwks && opts.jwksUrl) throw new TypeError('give a JWKS or a JWKS URL, not both');
    if (opts.jwks) {
      assertKeysPinned(opts.jwks, jwksAlgorithms);
      this.jwks = jose.createLocalJWKSet({ keys: opts.jwks.keys as JoseJwk[] });
    } else if (opts.jwksUrl) {
      this.jwks = jose.createRemoteJWKSet(new URL(opts.jwksUrl));
    }
    if (!this.secret && !this.jwks) throw new TypeError('an HS256 secret or a JWKS is required');
    this.algorithms = [...(this.secret ? ['HS256'] : []), ...(this.jwks ? jwksAlgorithms : [])];
  }

  /**
   * @throws GatewayError Unauthenticated when the token is malformed, badly signed,
   *   expired, not yet valid, for another issuer or audience, or lacks exp/sub.
   */
  async verify(token: string): Promise<Principal> {
    if (token.length === 0 || token.length > MAX_TOKEN_LENGTH)
      throw unauthenticated('malformed token');
    const known = this.recall(token);
    if (known !== undefined) return known;
    const now = Date.now();
    const principal = await this.verifyUncached(token);
    // Until the token's expiry without the clock tolerance: an expired token must fail
    // exactly as the uncached check would.
    const untilMs = Math.min(
      principal.expiresAtMs - this.clockToleranceS * 1000,
      now + VERIFIED_CACHE_TTL_MS,
    );
    if (untilMs > now) {
      if (this.verified.size >= VERIFIED_CACHE_ENTRIES) {
        const oldest = this.verified.keys().next();
        if (!oldest.done) this.verified.delete(oldest.value);
      }
      this.verified.set(token, { principal, untilMs });
    }
    return principal;
  }

  /**
   * The principal of a token verify() accepted recently, while that is still honoured
   * (see `verified`), else undefined: synchronous, for the paths that run on every
   * request (a poll), where a promise and its awaits cost more than the lookup.
   */
  recall(token: string): Principal | undefined {
    const hit = this.verified.get(token);
    if (hit === undefined) return undefined;
    if (Date.now() < hit.untilMs) return hit.principal;
    this.verified.delete(token);
    return undefined;
  }

  private async verifyUncached(token: string): Promise<Principal> {
    const { errors } = this.jose;
    let payload: JWTPayload;
    try {
      ({ payload } = await this.jose.jwtVerify(token, this.keyFor, {
        algorithms: [...this.algorithms],
        issuer: this.issuer,
        audience: this.audience,
        clockTolerance: this.clockToleranceS,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (err) {
      // A key set that cannot be fetched is our outage, not the caller's fault.
      if (
        err instanceof errors.JWKSTimeout ||
        (this.remote && !(err instanceof errors.JOSEError))
      ) {
        throw new GatewayError(ErrorCode.Unavailable, 'token keys unavailable');
      }
      if (err instanceof errors.JWTExpired) {
        throw new AuthFailure(ErrorCode.Unauthenticated, describe(errors, err), 'expired');
      }
      throw unauthenticated(describe(errors, err));
    }
    const sub = payload.sub;
    if (typeof sub !== 'string' || sub.length === 0 || sub.length > 128) {
      throw unauthenticated('token sub must be a non-empty string of at most 128 characters');
    }
    return {
      subject: sub,
      scopes: scopesFromClaims(payload as { scope?: unknown; scp?: unknown }),
      // requiredClaims guarantees a numeric exp.
      expiresAtMs: ((payload.exp as number) + this.clockToleranceS) * 1000,
    };
  }

  /** Picks the one key the token's algorithm may be verified with. */
  private readonly keyFor: GetKey = async (header, token) => {
    // `algorithms` has already refused anything not listed; this keeps HS256 away from
    // the JWKS and the asymmetric algorithms away from the secret.
    if (header.alg === 'HS256') {
      if (this.secret) return this.secret;
    } else if (this.jwks) {
      return this.jwks(header, token);
    }
    throw new this.jose.errors.JOSEAlgNotAllowed(
      '"alg" (Algorithm) Header Parameter value not allowed',
    );
  };
}

/** Each JWKS key must name its algorithm, and one we accept: the key is pinned to it. */
function assertKeysPinned(jwks: JsonWebKeySet, allowed: readonly AsymmetricAlgorithm[]): void {
  // Read from a file: do not trust the declared type. (Array.isArray on a readonly array
  // would narrow it to any[].)
  const keys: unknown = jwks.keys;
  if (!(keys instanceof Array) || keys.length === 0) {
    throw new TypeError('the JWKS has no keys');
  }
  for (const [i, key] of jwks.keys.entries()) {
    const alg = key.alg;
    if (typeof alg !== 'string' || !(allowed as readonly string[]).includes(alg)) {
      throw new TypeError(`JWKS key ${i} must declare "alg" as one of ${allowed.join(', ')}`);
    }
    if ('d' in key) throw new TypeError(`JWKS key ${i} is a private key; give public keys only`);
  }
}

function unauthenticated(message: string): GatewayError {
  return new GatewayError(ErrorCode.Unauthenticated, message);
}

/** What was wrong with a token, in words a client developer can act on. */
function describe(errors: Jose['errors'], err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'token expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return 'token not yet valid (nbf)';
    if (err.reason === 'missing') return `token lacks required claim ${err.claim}`;
    return `token claim ${err.claim} not accepted`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return 'token algorithm not allowed';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'token signature invalid';
  if (err instanceof errors.JWKSNoMatchingKey) return 'no key matches the token';
  return 'malformed token';
}
