import { status as GrpcStatus } from '@grpc/grpc-js';
import {
  ErrorCode,
  errorBody,
  GatewayError,
  GRPC_STATUS_BY_CODE,
  HTTP_STATUS_BY_CODE,
  toGatewayError,
} from './gateway-error';

const CODES = Object.values(ErrorCode);

describe('error codes', () => {
  it('every code has an HTTP status and a gRPC status', () => {
    expect(Object.keys(HTTP_STATUS_BY_CODE).sort()).toEqual([...CODES].sort());
    expect(Object.keys(GRPC_STATUS_BY_CODE).sort()).toEqual([...CODES].sort());
  });

  it('no two codes share an HTTP status or a gRPC status', () => {
    expect(new Set(Object.values(HTTP_STATUS_BY_CODE)).size).toBe(CODES.length);
    expect(new Set(Object.values(GRPC_STATUS_BY_CODE)).size).toBe(CODES.length);
  });

  it.each([
    [ErrorCode.InvalidArgument, 400, GrpcStatus.INVALID_ARGUMENT],
    [ErrorCode.Unauthenticated, 401, GrpcStatus.UNAUTHENTICATED],
    [ErrorCode.PermissionDenied, 403, GrpcStatus.PERMISSION_DENIED],
    [ErrorCode.NotFound, 404, GrpcStatus.NOT_FOUND],
    [ErrorCode.FailedPrecondition, 409, GrpcStatus.FAILED_PRECONDITION],
    [ErrorCode.ResourceExhausted, 429, GrpcStatus.RESOURCE_EXHAUSTED],
    [ErrorCode.Internal, 500, GrpcStatus.INTERNAL],
    [ErrorCode.Unavailable, 503, GrpcStatus.UNAVAILABLE],
    [ErrorCode.DeadlineExceeded, 504, GrpcStatus.DEADLINE_EXCEEDED],
  ])('%s maps to HTTP %i and to the gRPC status of the same name', (code, http, grpc) => {
    expect(HTTP_STATUS_BY_CODE[code]).toBe(http);
    expect(GRPC_STATUS_BY_CODE[code]).toBe(grpc);
  });

  it('GatewayError is an Error carrying its code and message', () => {
    const err = new GatewayError(ErrorCode.NotFound, 'order x not found');
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('GatewayError');
    expect(err.code).toBe(ErrorCode.NotFound);
    expect(err.message).toBe('order x not found');
    expect(errorBody(err)).toEqual({
      error: { code: 'not_found', message: 'order x not found' },
    });
  });

  it('toGatewayError keeps typed errors and hides everything else behind Internal', () => {
    const typed = new GatewayError(ErrorCode.Unavailable, 'store down');
    expect(toGatewayError(typed)).toBe(typed);
    for (const other of [new Error('secret detail'), 'boom', undefined, { code: 'x' }]) {
      const err = toGatewayError(other);
      expect(err.code).toBe(ErrorCode.Internal);
      expect(err.message).toBe('internal error');
    }
  });
});
