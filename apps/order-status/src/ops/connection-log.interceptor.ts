import {
  Inject,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { finalize, tap, type Observable } from 'rxjs';
import { ConnectionLog, principalOf } from './connection-log';

/**
 * The part of a grpc-js server call this needs. The gRPC handler authenticates from its
 * metadata itself, after this runs; when it leaves the principal on the call
 * (`call.principal`), the closing line names it.
 */
interface GrpcCallLike {
  once(event: 'cancelled', listener: () => void): unknown;
}

/**
 * Opens and closes the connection log line around a gRPC server-streaming handler
 * (bound with @UseInterceptors on Subscribe only): the end is taken from the call's
 * Observable or its cancellation. HTTP streams are logged by ConnectionLogGuard, which
 * costs a held request nothing; socket.io connections by ObservedIoAdapter.
 */
@Injectable()
export class GrpcConnectionLogInterceptor implements NestInterceptor {
  constructor(@Inject(ConnectionLog) private readonly log: ConnectionLog) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const call = context.getArgByIndex<GrpcCallLike>(2);
    const req = context.switchToRpc().getData<{ orderId?: string }>();
    const conn = this.log.opened('grpc', principalOf(call), { orderId: req.orderId });
    // A cancelled call (client gone, deadline) may never complete its Observable.
    call.once('cancelled', () => conn.closed('cancelled', principalOf(call)));
    return next.handle().pipe(
      tap({
        complete: () => conn.closed('completed', principalOf(call)),
        error: (err: unknown) =>
          conn.closed(err instanceof Error ? err.message : 'error', principalOf(call)),
      }),
      finalize(() => conn.closed(undefined, principalOf(call))),
    );
  }
}
