import { Catch, Logger, type ArgumentsHost, type RpcExceptionFilter } from '@nestjs/common';
import { throwError, type Observable } from 'rxjs';
import { status as GrpcCode } from '@grpc/grpc-js';
import { toGrpcStatus, type GrpcStatus } from './grpc-status';

/**
 * Turns whatever a gRPC handler throws (or its stream errors with) into a gRPC status
 * object. Nest then hands it to grpc-js (`callback(err)` for unary calls,
 * `call.emit('error', err)` for streams), which sends exactly that code and details.
 *
 * Without it Nest's default RPC filter turns any non-RpcException into
 * `{ status: 'error', message }`, which has no numeric code and reaches the client as
 * UNKNOWN. Bound on the controller, so it wins over the app's global (HTTP) filter.
 */
@Catch()
export class GrpcExceptionFilter implements RpcExceptionFilter<unknown> {
  private readonly logger = new Logger('GrpcExceptionFilter');

  catch(exception: unknown, _host: ArgumentsHost): Observable<GrpcStatus> {
    const status = toGrpcStatus(exception);
    if (status.code === GrpcCode.INTERNAL) this.logger.error(exception);
    return throwError(() => status);
  }
}
