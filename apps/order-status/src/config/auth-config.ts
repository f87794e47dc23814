import {
  ASYMMETRIC_ALGORITHMS,
  DEFAULT_AUDIENCE,
  DEFAULT_CLOCK_TOLERANCE_S,
  DEFAULT_CONNECTION_LEASE_MS,
  DEFAULT_ISSUER,
  DEFAULT_JWKS_ALGORITHMS,
  DEFAULT_MAX_CONNECTIONS_PER_PRINCIPAL,
  DEFAULT_TICKET_TTL_MS,
  DEMO_HS256_SECRET,
  MIN_HS256_SECRET_BYTES,
  type AsymmetricAlgorithm,
} from '@app/auth';
import type { EnvReader } from './env-schema';

/** Token verification, stream credentials and the HTTP CORS allow-list (docs/security.md). */
export interface AuthConfig {
  /** NODE_ENV=production: the demo secret is refused. */
  readonly production: boolean;
  /** HS256 secret; the public demo secret unless configured (never in production). */
  readonly hs256Secret?: string;
  /** True when `hs256Secret` is the public demo secret: start-up prints a ready token. */
  readonly demoSecret: boolean;
  readonly jwksFile?: string;
  readonly jwksUrl?: string;
  readonly jwksAlgorithms: readonly AsymmetricAlgorithm[];
  readonly issuer: string;
  readonly audience: string;
  readonly clockToleranceS: number;
  /** Lifetime of a single-use SSE stream ticket. */
  readonly ticketTtlMs: number;
  /** Name of the HttpOnly cookie EventSource can authenticate with. */
  readonly cookieName: string;
  /** Origins allowed to call the HTTP API from a browser (CORS). */
  readonly corsOrigins: readonly string[];
}

/** Per-principal and per-connection limits; each crossing is a typed `resource_exhausted`. */
export interface LimitsConfig {
  /** Open streams per principal over every transport (0: unlimited). */
  readonly connectionsPerPrincipal: number;
  /**
   * With Redis: how long an instance's share of those counts outlives its last renewal
   * (renewed every third of it), i.e. how soon the slots of a dead instance come back.
   */
  readonly connectionLeaseMs: number;
  /** Orders one socket.io connection may follow at once. */
  readonly subscriptionsPerSocket: number;
  /** Publishes (REST and gRPC) per principal per window. */
  readonly publishPerWindow: number;
  readonly publishWindowMs: number;
}

/** @default 100 subscriptions per socket.io connection */
export const DEFAULT_SUBSCRIPTIONS_PER_SOCKET = 100;
/** @default 100 publishes per principal per window */
export const DEFAULT_PUBLISH_PER_WINDOW = 100;
/** @default 1_000 ms publish-rate window */
export const DEFAULT_PUBLISH_WINDOW_MS = 1_000;

const DEFAULT_ORIGINS = ['http://localhost:3000', 'https://localhost:3443'];

export function readAuthConfig(r: EnvReader): AuthConfig {
  const production =
    r.str('NODE_ENV', 'development', {
      text: '`production` refuses the public demo secret and a start without keys, and turns `DOCS_ENABLED` off by default',
      values: '`production` or anything else',
    }) === 'production';
  const jwksFile = r.optional('AUTH_JWKS_FILE', {
    text: 'RS256/ES256 public keys (a JWKS file), each used for the `alg` it declares; not with `AUTH_JWKS_URL`',
    values: 'path',
  });
  const jwksUrl = r.optional('AUTH_JWKS_URL', {
    text: "the identity provider's JWKS endpoint; not with `AUTH_JWKS_FILE`",
    values: 'http(s) URL, https with NODE_ENV=production',
  });
  const configured = r.optional('AUTH_HS256_SECRET', {
    text: 'HS256 verification key; unset and no JWKS: the public demo secret (refused with NODE_ENV=production)',
    default: 'the public demo secret',
    values: 'at least 32 bytes',
  });
  // Without any key material the demo secret is used, except in production.
  const hs256Secret =
    configured ?? (jwksFile || jwksUrl || production ? undefined : DEMO_HS256_SECRET);
  if (production && hs256Secret === DEMO_HS256_SECRET) {
    r.problems.push(
      'AUTH_HS256_SECRET: the public demo secret must not be used with NODE_ENV=production',
    );
  }
  if (!hs256Secret && !jwksFile && !jwksUrl) {
    r.problems.push(
      'NODE_ENV=production needs AUTH_JWKS_FILE, AUTH_JWKS_URL or AUTH_HS256_SECRET (tokens cannot be verified otherwise)',
    );
  }
  if (hs256Secret !== undefined && Buffer.byteLength(hs256Secret) < MIN_HS256_SECRET_BYTES) {
    r.problems.push(`AUTH_HS256_SECRET: must be at least ${MIN_HS256_SECRET_BYTES} bytes`);
  }
  if (jwksFile && jwksUrl) r.problems.push('AUTH_JWKS_FILE and AUTH_JWKS_URL: set one, not both');
  if (jwksUrl !== undefined && !/^https?:\/\/\S+$/.test(jwksUrl)) {
    r.problems.push(`AUTH_JWKS_URL=${JSON.stringify(jwksUrl)}: must be an http(s) URL`);
  }
  if (production && jwksUrl?.startsWith('http:')) {
    r.problems.push('AUTH_JWKS_URL: must be https with NODE_ENV=production');
  }
  const jwksAlgorithms = r.list(
    'AUTH_JWKS_ALGORITHMS',
    DEFAULT_JWKS_ALGORITHMS,
    'algorithms accepted for JWKS keys (`RS256`, `ES256`)',
  );
  for (const alg of jwksAlgorithms) {
    if (!(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg)) {
      r.problems.push(
        `AUTH_JWKS_ALGORITHMS: ${JSON.stringify(alg)} must be one of ${ASYMMETRIC_ALGORITHMS.join(', ')}`,
      );
    }
  }
  return {
    production,
    hs256Secret,
    demoSecret: hs256Secret === DEMO_HS256_SECRET,
    jwksFile,
    jwksUrl,
    jwksAlgorithms: jwksAlgorithms as AsymmetricAlgorithm[],
    issuer: r.str('AUTH_ISSUER', DEFAULT_ISSUER, 'required `iss` claim'),
    audience: r.str('AUTH_AUDIENCE', DEFAULT_AUDIENCE, 'required `aud` claim'),
    clockToleranceS: r.int(
      'AUTH_CLOCK_TOLERANCE_S',
      DEFAULT_CLOCK_TOLERANCE_S,
      0,
      300,
      'clock skew allowed on `exp` and `nbf`',
    ),
    ticketTtlMs:
      r.int(
        'AUTH_STREAM_TICKET_TTL_S',
        DEFAULT_TICKET_TTL_MS / 1000,
        1,
        300,
        'lifetime of a single-use SSE stream ticket',
      ) * 1000,
    cookieName: r.str(
      'AUTH_COOKIE_NAME',
      'order_status_token',
      'name of the HttpOnly cookie EventSource authenticates with',
    ),
    corsOrigins: r.list(
      'HTTP_CORS_ORIGINS',
      DEFAULT_ORIGINS,
      'origins allowed to call the HTTP API from a browser (CORS)',
    ),
  };
}

export function readLimitsConfig(r: EnvReader): LimitsConfig {
  return {
    connectionsPerPrincipal: r.int(
      'LIMIT_CONNECTIONS_PER_PRINCIPAL',
      DEFAULT_MAX_CONNECTIONS_PER_PRINCIPAL,
      0,
      1_000_000,
      'open streams per token subject over every transport (0: unlimited)',
    ),
    connectionLeaseMs: r.int(
      'LIMIT_CONNECTION_LEASE_MS',
      DEFAULT_CONNECTION_LEASE_MS,
      300,
      3_600_000,
      "with Redis: how long an instance's share of the stream counts outlives its last renewal (renewed every third of it), i.e. how soon a dead instance's slots come back",
    ),
    subscriptionsPerSocket: r.int(
      'WS_MAX_SUBSCRIPTIONS_PER_SOCKET',
      DEFAULT_SUBSCRIPTIONS_PER_SOCKET,
      1,
      100_000,
      'orders one socket.io connection may follow at once',
    ),
    publishPerWindow: r.int(
      'LIMIT_PUBLISH_PER_WINDOW',
      DEFAULT_PUBLISH_PER_WINDOW,
      1,
      1_000_000,
      'publishes (REST and gRPC together) per token subject per window',
    ),
    publishWindowMs: r.int(
      'LIMIT_PUBLISH_WINDOW_MS',
      DEFAULT_PUBLISH_WINDOW_MS,
      100,
      3_600_000,
      'the window of `LIMIT_PUBLISH_PER_WINDOW`',
    ),
  };
}
