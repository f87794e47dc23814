import {
  Inject,
  Injectable,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ConnectionObserver, principalOf } from './connection-observer';
import { HTTP_CONNECTION_ROUTES } from './connection-routes';
import { httpConnectionPort } from './http-connection-port';

/**
 * Logs the opened and closed lines of a held HTTP connection (an SSE stream, a long-poll
 * hold). It is a guard that always lets the request through, not an interceptor, for
 * memory: any interceptor makes Nest run the handler inside an RxJS pipeline (defer,
 * mergeAll, from(promise)) that a held request keeps alive for its whole life. Method
 * guards run after the global HttpAuthGuard, so the principal is known.
 */
@Injectable()
export class ConnectionLogGuard implements CanActivate {
  constructor(@Inject(ConnectionObserver) private readonly log: ConnectionObserver) {}

  canActivate(context: ExecutionContext): boolean {
    // Nothing to do, and nothing to allocate, when the lines are not written.
    if (!this.log.enabled) return true;
    // The arguments themselves: switchToHttp() builds an object and three closures per call.
    const req = context.getArgByIndex<FastifyRequest>(0);
    const route = req.routeOptions.url ?? '';
    const transport = HTTP_CONNECTION_ROUTES[route];
    // A route decorated but not listed would also be logged line-per-request by pino-http.
    if (transport === undefined) throw new Error(`${route} is not in HTTP_CONNECTION_ROUTES`);
    const conn = this.log.opened(transport, principalOf(req), {
      orderId: (req.params as { orderId?: string }).orderId,
      httpVersion: req.raw.httpVersion,
    });
    httpConnectionPort(context.getArgByIndex<FastifyReply>(1)).watchGone(() => conn.closed());
    return true;
  }
}

/** Marks a route handler as a held connection: logged opened/closed by ConnectionLogGuard. */
export const LogConnection = () => UseGuards(ConnectionLogGuard);
