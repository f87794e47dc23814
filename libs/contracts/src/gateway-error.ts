/**
 * Transport-neutral error codes. Each transport maps them to its own vocabulary
 * (HTTP status, gRPC status code, socket.io error ack) with the tables below, so a
 * failure means the same thing whichever way a client connects.
 */
export enum ErrorCode {
  InvalidArgument = 'invalid_argument',
  NotFound = 'not_found',
  FailedPrecondition = 'failed_precondition',
  Unauthenticated = 'unauthenticated',
  PermissionDenied = 'permission_denied',
  ResourceExhausted = 'resource_exhausted',
  Unavailable = 'unavailable',
  DeadlineExceeded = 'deadline_exceeded',
  Internal = 'internal',
}

export const HTTP_STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  [ErrorCode.InvalidArgument]: 400,
  [ErrorCode.Unauthenticated]: 401,
  [ErrorCode.PermissionDenied]: 403,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.FailedPrecondition]: 409,
  [ErrorCode.ResourceExhausted]: 429,
  [ErrorCode.Internal]: 500,
  [ErrorCode.Unavailable]: 503,
  [ErrorCode.DeadlineExceeded]: 504,
};

/** Numeric gRPC status codes (grpc/doc/statuscodes.md), kept here so contracts need no gRPC dependency. */
export const GRPC_STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  [ErrorCode.InvalidArgument]: 3,
  [ErrorCode.DeadlineExceeded]: 4,
  [ErrorCode.NotFound]: 5,
  [ErrorCode.PermissionDenied]: 7,
  [ErrorCode.ResourceExhausted]: 8,
  [ErrorCode.FailedPrecondition]: 9,
  [ErrorCode.Internal]: 13,
  [ErrorCode.Unavailable]: 14,
  [ErrorCode.Unauthenticated]: 16,
};

/** A runtime failure a client can act on; programmer errors stay plain `Error`s. */
export class GatewayError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /**
     * When a retry may succeed (a limit's window, a slot's expected release): HTTP
     * `Retry-After`, gRPC `retry-after-ms` trailer, `retryAfterMs` in the error body.
     */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'GatewayError';
  }
}

export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError(ErrorCode.Internal, 'internal error');
}

/** The JSON body every HTTP error and every socket.io error ack carries. */
export interface ErrorBody {
  readonly error: {
    readonly code: ErrorCode;
    readonly message: string;
    readonly retryAfterMs?: number;
  };
}

export function errorBody(err: GatewayError): ErrorBody {
  const { code, message, retryAfterMs } = err;
  return {
    error: retryAfterMs === undefined ? { code, message } : { code, message, retryAfterMs },
  };
}

/** `Retry-After` in whole seconds (RFC 9110 section 10.2.3), at least 1. */
export function retryAfterSeconds(retryAfterMs: number): string {
  return String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
}
