import type { FastifyInstance } from 'fastify';
import { PinoLogger, type Params } from 'nestjs-pino';
import { pinoHttp } from 'pino-http';
import { HTTP_CONNECTION_ROUTES } from '../connections/connection-routes';
import { isQuietRequest, REQUEST_LOG_OPTIONS } from './logging';

/**
 * One pino-http line per ordinary request, as a Fastify `onRequest` hook registered
 * before every other one (so a request another hook answers, a 400 from the order-id
 * gate or a 503 while draining, is logged too).
 *
 * Skipped entirely (no line, no request context): the held routes (an SSE stream, a
 * long-poll), which get opened/closed lines from ConnectionLog instead and of which a
 * poll is a request many times a second, and the quiet requests (probes, scrapes, the
 * demo page's files). nestjs-pino's own way, a Nest middleware on every path with the
 * held routes excluded, still sent every poll through middie and Nest's exclusion check,
 * and before Node 24 a request context turns promise hooks on for the whole process.
 *
 * With `context` (see request-context.ts for when), lines logged while handling a request
 * carry its id: the rest of the request runs in nestjs-pino's request context
 * (PinoLogger.runInContext), as its middleware did. Without it, only the request's own
 * line does.
 */
export function registerRequestLog(
  fastify: FastifyInstance,
  params: Params,
  { context: withContext }: { readonly context: boolean },
): void {
  // Builds (or finds) nestjs-pino's root logger, so the lines go through the same one.
  const context = new PinoLogger(params);
  const httpLogger = pinoHttp({ ...REQUEST_LOG_OPTIONS, logger: PinoLogger.root });
  fastify.addHook('onRequest', (req, reply, done) => {
    const route = req.routeOptions.url;
    const held = route !== undefined && HTTP_CONNECTION_ROUTES[route] !== undefined;
    if (held || isQuietRequest(req.url)) {
      done();
      return;
    }
    httpLogger(req.raw, reply.raw);
    if (withContext) context.runInContext(done, { bindings: { reqId: req.raw.id } });
    else done();
  });
}
