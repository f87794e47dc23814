import { status as GrpcCode } from '@grpc/grpc-js';
import { RpcException } from '@nestjs/microservices';
import { ErrorCode, GatewayError, StreamEndReason, StreamEndTrailer } from '@app/contracts';
import { streamEndError, toGrpcStatus } from './grpc-status';

describe('toGrpcStatus', () => {
  it.each([
    [ErrorCode.InvalidArgument, GrpcCode.INVALID_ARGUMENT],
    [ErrorCode.NotFound, GrpcCode.NOT_FOUND],
    [ErrorCode.FailedPrecondition, GrpcCode.FAILED_PRECONDITION],
    [ErrorCode.Unavailable, GrpcCode.UNAVAILABLE],
    [ErrorCode.DeadlineExceeded, GrpcCode.DEADLINE_EXCEEDED],
    [ErrorCode.ResourceExhausted, GrpcCode.RESOURCE_EXHAUSTED],
  ])('maps GatewayError %s to gRPC code %i with its message', (code, grpc) => {
    expect(toGrpcStatus(new GatewayError(code, 'why'))).toEqual({ code: grpc, details: 'why' });
  });

  it('passes an explicit status object through, also inside an RpcException', () => {
    const s = { code: GrpcCode.PERMISSION_DENIED, details: 'no' };
    expect(toGrpcStatus(s)).toEqual(s);
    expect(toGrpcStatus(new RpcException(s))).toEqual(s);
  });

  it('hides anything else behind INTERNAL', () => {
    expect(toGrpcStatus(new Error('secret stack'))).toEqual({
      code: GrpcCode.INTERNAL,
      details: 'internal error',
    });
  });
});

describe('streamEndError', () => {
  it('is UNAVAILABLE naming the reason and the resume point', () => {
    const s = toGrpcStatus(streamEndError(StreamEndReason.MaxAge, 42));
    expect(s.code).toBe(GrpcCode.UNAVAILABLE);
    expect(s.details).toContain('max_age');
    expect(s.details).toContain('after_seq=42');
    // The same facts, machine-readable, in the trailers.
    expect(s.metadata?.get(StreamEndTrailer.Reason)).toEqual(['max_age']);
    expect(s.metadata?.get(StreamEndTrailer.ResumeAfterSeq)).toEqual(['42']);
    expect(s.metadata?.get(StreamEndTrailer.RetryAfterMs)).toEqual([]);
  });

  it('carries reconnect advice at shutdown and UNAUTHENTICATED for an expired token', () => {
    const shutdown = toGrpcStatus(streamEndError(StreamEndReason.Shutdown, 7, 1234.4));
    expect(shutdown.code).toBe(GrpcCode.UNAVAILABLE);
    expect(shutdown.metadata?.get(StreamEndTrailer.RetryAfterMs)).toEqual(['1234']);
    const expired = toGrpcStatus(streamEndError(StreamEndReason.TokenExpired, 3));
    expect(expired.code).toBe(GrpcCode.UNAUTHENTICATED);
    expect(expired.metadata?.get(StreamEndTrailer.Reason)).toEqual(['token_expired']);
    expect(expired.metadata?.get(StreamEndTrailer.ResumeAfterSeq)).toEqual(['3']);
  });
});
