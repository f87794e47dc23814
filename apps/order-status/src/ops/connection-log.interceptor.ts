import {
  Inject,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { finalize, tap, type Observable } from 'rxjs';
import { onClientGone } from '../http/client-gone';
import { ConnectionLog, principalOf } from './connection-log';

/**
 * HTTP routes that hold a connection open for a stream or a poll, with their transport
 * label (the same labels the transports give the bus). Every other route is an ordinary
 * request, logged once by pino-http.
 */
export const HTTP_CONNECTION_ROUTES: Readonly<Record<string, string>> = {
  '/v1/orders/:orderId/stream': 'sse',
  '/v1/orders/:orderId/events': 'long-poll',
};

/**
 * The part of a grpc-js server call this needs: streaming calls can write. The gRPC
 * handler authenticates from its metadata itself, after this runs; when it leaves the
 * principal on the call (`call.principal`), the closing line names it.
 */
interface GrpcCallLike {
  write?: unknown;
  once(event: 'cancelled', listener: () => void): unknown;
}

/**
 * Opens and closes the connection log line around SSE, long-poll and gRPC Subscribe
 * handlers without the transports knowing: guards have run by now, so the principal is
 * known, and the end is taken from the response (HTTP) or the call's Observable (gRPC).
 * socket.io connections are logged by the adapter (ObservedIoAdapter).
 */
@Injectable()
export class ConnectionLogInterceptor implements NestInterceptor {
  constructor(@Inject(ConnectionLog) private readonly log: ConnectionLog) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() === 'http') {
      const req = context.switchToHttp().getRequest<FastifyRequest>();
      const transport = HTTP_CONNECTION_ROUTES[req.routeOptions.url ?? ''];
      if (transport !== undefined) {
        const reply = context.switchToHttp().getResponse<FastifyReply>();
        const conn = this.log.opened(transport, principalOf(req), {
          orderId: (req.params as { orderId?: string }).orderId,
          httpVersion: req.raw.httpVersion,
        });
        onClientGone(reply, () => conn.closed());
      }
      return next.handle();
    }
    if (context.getType() === 'rpc') {
      const call = context.getArgByIndex<GrpcCallLike | undefined>(2);
      if (call === undefined || typeof call.write !== 'function') return next.handle();
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
    return next.handle();
  }
}
