import { domainMismatchOf, type DomainMismatch } from '@app/contracts/expected-domain';
import { ErrorCode, GRPC_STATUS_BY_CODE, HTTP_STATUS_BY_CODE } from '@app/contracts/gateway-error';

/**
 * Codes after which retrying the same request cannot succeed: the watch ends with the
 * error (after asking getToken() once for the two auth codes).
 */
const PERMANENT: ReadonlySet<ErrorCode> = new Set([
  ErrorCode.InvalidArgument,
  ErrorCode.NotFound,
  ErrorCode.FailedPrecondition,
  ErrorCode.Unauthenticated,
  ErrorCode.PermissionDenied,
]);

/** Codes a new token may cure. */
const AUTH: ReadonlySet<ErrorCode> = new Set([
  ErrorCode.Unauthenticated,
  ErrorCode.PermissionDenied,
]);

const CODES = new Set<string>(Object.values(ErrorCode));

/** Why a connection could not be made at all (no answer from the service). */
export type NetworkCause = 'refused' | 'tls' | 'dns' | 'timeout' | 'reset' | 'origin' | 'other';

/**
 * A failure of one connection attempt, in the service's transport-neutral vocabulary
 * (the same codes as the service's GatewayError), whatever the transport said it with.
 * The message ends with what the transport said: `(HTTP 401)`, `(gRPC 16)`,
 * `(socket.io unauthenticated)`, or the URL and the network cause.
 */
export class WatchError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** When the service said when to retry (Retry-After, retry-after-ms, retryAfterMs). */
    readonly retryAfterMs?: number,
    /**
     * The HTTP status (SSE, long-poll, and socket.io: the status the service's HTTP API
     * gives the same code) or the gRPC status code; undefined when the service never
     * answered (see `network`).
     */
    readonly status?: number,
    /** What the connection could not reach, when it failed below HTTP or gRPC. */
    readonly network?: { readonly url: string; readonly cause: NetworkCause },
  ) {
    super(message);
    this.name = 'WatchError';
  }

  /** Retrying cannot help (a new token might, for the auth codes). */
  get permanent(): boolean {
    return PERMANENT.has(this.code);
  }

  get auth(): boolean {
    return AUTH.has(this.code);
  }

  /**
   * The service streams another domain than the watch decodes (`WatchOptions.domain`):
   * both names, else undefined.
   */
  get domainMismatch(): DomainMismatch | undefined {
    return this.code === ErrorCode.FailedPrecondition ? domainMismatchOf(this.message) : undefined;
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && CODES.has(value);
}

const CODE_BY_HTTP = new Map<number, ErrorCode>(
  Object.entries(HTTP_STATUS_BY_CODE).map(([code, status]) => [status, code as ErrorCode]),
);
const CODE_BY_GRPC = new Map<number, ErrorCode>(
  Object.entries(GRPC_STATUS_BY_CODE).map(([code, status]) => [status, code as ErrorCode]),
);

/** An HTTP error status (and its JSON error body, when it has one) as a WatchError. */
export function httpError(status: number, body: unknown, retryAfter: string | null): WatchError {
  const err = (body as { error?: { code?: unknown; message?: unknown; retryAfterMs?: unknown } })
    ?.error;
  const code = isErrorCode(err?.code)
    ? err.code
    : (CODE_BY_HTTP.get(status) ??
      (status >= 400 && status < 500 ? ErrorCode.InvalidArgument : ErrorCode.Unavailable));
  const message = typeof err?.message === 'string' ? err.message : `HTTP ${status}`;
  const retryAfterMs =
    typeof err?.retryAfterMs === 'number' ? err.retryAfterMs : retryAfterHeaderMs(retryAfter);
  return new WatchError(code, `${message} (HTTP ${status})`, retryAfterMs, status);
}

/** A gRPC status code as a WatchError (unknown codes are transient: UNAVAILABLE). */
export function grpcError(code: number, details: string, retryAfterMs?: number): WatchError {
  return new WatchError(
    CODE_BY_GRPC.get(code) ?? ErrorCode.Unavailable,
    `${details || 'gRPC error'} (gRPC ${code})`,
    retryAfterMs,
    code,
  );
}

/**
 * A socket.io error body ({code, message, retryAfterMs}: an ack or a connect_error's
 * data), with the HTTP status the service gives the same code, as on SSE and long-poll.
 */
export function socketIoError(err: unknown, fallback: string): WatchError {
  const e = err as { code?: unknown; message?: unknown; retryAfterMs?: unknown } | undefined;
  const code = isErrorCode(e?.code) ? e.code : ErrorCode.Unavailable;
  return new WatchError(
    code,
    `${typeof e?.message === 'string' ? e.message : fallback} (socket.io ${code})`,
    typeof e?.retryAfterMs === 'number' ? e.retryAfterMs : undefined,
    HTTP_STATUS_BY_CODE[code],
  );
}

/** Node's error codes (from the cause chain) for what a connection could not do. */
const NETWORK_CAUSES: Record<string, NetworkCause> = {
  ECONNREFUSED: 'refused',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'tls',
  SELF_SIGNED_CERT_IN_CHAIN: 'tls',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'tls',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'tls',
  CERT_HAS_EXPIRED: 'tls',
  ERR_TLS_CERT_ALTNAME_INVALID: 'tls',
};

const CAUSE_TEXT: Record<NetworkCause, string> = {
  refused: 'connection refused',
  tls: 'TLS certificate not trusted',
  dns: 'host not found',
  timeout: 'connect timed out',
  reset: 'connection reset',
  origin: 'refused at the handshake (HTTP 403: is this Origin allowed?)',
  other: 'connection failed',
};

/** The innermost error of a `cause` chain that has a code, or the innermost one. */
function rootCause(err: unknown): { code?: string; message: string } {
  let e: unknown = err;
  let found: { code?: string; message: string } = { message: String(err) };
  for (let depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    const x = e as { code?: unknown; message?: unknown; cause?: unknown; description?: unknown };
    const message = typeof x.message === 'string' ? x.message : undefined;
    if (typeof x.code === 'string') found = { code: x.code, message: message ?? found.message };
    else if (found.code === undefined && message !== undefined) found = { message };
    // socket.io-client keeps the transport's error event in `description`; in Node that
    // is the `ws` ErrorEvent, whose `error` is the socket's own error.
    const d = x.description as { error?: unknown } | undefined;
    e = x.cause ?? (d instanceof Error ? d : typeof d === 'object' ? d?.error : undefined);
  }
  return found;
}

/**
 * A connection that got no answer from the service (fetch failed, a socket error), as a
 * transient WatchError that names the URL and the cause: a refused connection, an
 * untrusted certificate, a refused Origin and a DNS failure no longer look the same.
 */
export function networkError(url: string, err: unknown): WatchError {
  const root = rootCause(err);
  const cause: NetworkCause =
    (root.code !== undefined ? NETWORK_CAUSES[root.code] : undefined) ??
    (/Unexpected server response: 403/.test(root.message)
      ? 'origin'
      : /certificate/i.test(root.message)
        ? 'tls'
        : 'other');
  const detail = root.code !== undefined ? `${root.code}: ${root.message}` : root.message;
  return new WatchError(
    ErrorCode.Unavailable,
    `${url}: ${CAUSE_TEXT[cause]} (${detail})`,
    undefined,
    undefined,
    { url, cause },
  );
}

/** `Retry-After` as delay-seconds (RFC 9110 section 10.2.3); an HTTP date is ignored. */
export function retryAfterHeaderMs(value: string | null): number | undefined {
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim()) * 1000;
}

/** Anything a transport threw: WatchErrors as they are, everything else a transient drop. */
export function toWatchError(err: unknown): WatchError {
  if (err instanceof WatchError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new WatchError(ErrorCode.Unavailable, message);
}
