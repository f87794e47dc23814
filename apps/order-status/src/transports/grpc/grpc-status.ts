import { Metadata, status as GrpcCode, type StatusObject } from '@grpc/grpc-js';
import { RpcException } from '@nestjs/microservices';
import {
  ErrorCode,
  GatewayError,
  GRPC_STATUS_BY_CODE,
  StreamEndReason,
  StreamEndTrailer,
} from '@app/contracts';

/**
 * What grpc-js turns into the call's final status: a numeric `code`, its `details` and
 * optional trailing `metadata` (grpc-js `serverErrorToStatus()` reads these fields of an
 * emitted error or a unary callback error; anything without a numeric code becomes
 * UNKNOWN).
 */
export type GrpcStatus = Pick<StatusObject, 'code' | 'details'> & { metadata?: Metadata };

export function isGrpcStatus(value: unknown): value is GrpcStatus {
  const v = value as Partial<GrpcStatus> | null;
  return (
    typeof v === 'object' && v !== null && Number.isInteger(v.code) && typeof v.details === 'string'
  );
}

/**
 * Maps any failure to the status the client receives: GatewayErrors through the shared
 * table (contracts' GRPC_STATUS_BY_CODE), an explicit status object as is, everything
 * else INTERNAL with no detail leaked.
 */
export function toGrpcStatus(err: unknown): GrpcStatus {
  if (err instanceof StreamEndError) {
    return { code: GRPC_STATUS_BY_CODE[err.code], details: err.message, metadata: err.trailers() };
  }
  if (err instanceof GatewayError) {
    const status = { code: GRPC_STATUS_BY_CODE[err.code], details: err.message };
    return err.retryAfterMs === undefined ? status : { ...status, metadata: retryTrailer(err) };
  }
  const inner = err instanceof RpcException ? err.getError() : err;
  if (isGrpcStatus(inner)) return { code: inner.code, details: inner.details };
  return { code: GrpcCode.INTERNAL, details: 'internal error' };
}

/** `retry-after-ms` (StreamEndTrailer.RetryAfterMs) for a refusal that says when to retry. */
function retryTrailer(err: GatewayError): Metadata {
  const md = new Metadata();
  md.set(StreamEndTrailer.RetryAfterMs, String(Math.round(err.retryAfterMs ?? 0)));
  return md;
}

/**
 * A stream the service ended on purpose. Besides the status code and a readable
 * details line, the call's trailers carry the reason, the seq to resume after and any
 * reconnect advice (contracts' StreamEndTrailer), so clients need not parse text.
 */
export class StreamEndError extends GatewayError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly reason: StreamEndReason,
    readonly resumeAfterSeq: number,
    readonly retryAfterMs?: number,
  ) {
    super(code, message);
    this.name = 'StreamEndError';
  }

  trailers(): Metadata {
    const md = new Metadata();
    md.set(StreamEndTrailer.Reason, this.reason);
    md.set(StreamEndTrailer.ResumeAfterSeq, String(this.resumeAfterSeq));
    if (this.retryAfterMs !== undefined) {
      md.set(StreamEndTrailer.RetryAfterMs, String(Math.round(this.retryAfterMs)));
    }
    return md;
  }
}

/**
 * Why the service ended a stream, as the error that ends the call. Only `completed`
 * ends with OK (the order is finished); `token_expired` is UNAUTHENTICATED; every other
 * reason is UNAVAILABLE, which gRPC clients treat as "retry" (grpc/doc/statuscodes.md:
 * "most likely a transient condition"). Details and trailers name the reason and the
 * seq to resume after.
 */
export function streamEndError(
  reason: StreamEndReason,
  lastSeq: number,
  retryAfterMs?: number,
): StreamEndError {
  if (reason === StreamEndReason.TokenExpired) {
    // UNAUTHENTICATED, not UNAVAILABLE: retrying with the same token cannot work, and a
    // client must be able to tell this from a network failure.
    return new StreamEndError(
      ErrorCode.Unauthenticated,
      `stream ended (${reason}); resubscribe with a fresh token and after_seq=${lastSeq}`,
      reason,
      lastSeq,
      retryAfterMs,
    );
  }
  return new StreamEndError(
    ErrorCode.Unavailable,
    `stream ended (${reason}); resubscribe with after_seq=${lastSeq}`,
    reason,
    lastSeq,
    retryAfterMs,
  );
}
