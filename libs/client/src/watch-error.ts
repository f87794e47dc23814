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

/**
 * A failure of one connection attempt, in the service's transport-neutral vocabulary
 * (the same codes as the service's GatewayError), whatever the transport said it with.
 */
export class WatchError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** When the service said when to retry (Retry-After, retry-after-ms, retryAfterMs). */
    readonly retryAfterMs?: number,
    /** The HTTP status or gRPC status code it came with, when there was one. */
    readonly status?: number,
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

/** An error body's `error` ({code, message, retryAfterMs}), e.g. a socket.io ack or connect_error. */
export function bodyError(err: unknown, fallback: string): WatchError {
  const e = err as { code?: unknown; message?: unknown; retryAfterMs?: unknown } | undefined;
  return new WatchError(
    isErrorCode(e?.code) ? e.code : ErrorCode.Unavailable,
    typeof e?.message === 'string' ? e.message : fallback,
    typeof e?.retryAfterMs === 'number' ? e.retryAfterMs : undefined,
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
