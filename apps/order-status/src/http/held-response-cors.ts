import type { FastifyReply } from 'fastify';
import { HTTP_CONNECTION_ROUTES } from '../connections/connection-routes';

/** The (private) step of NestJS 12's FastifyAdapter this module adjusts. */
interface CorsCopy {
  copyCorsHeadersToRaw(reply: FastifyReply): void;
}

/**
 * Keeps NestJS from copying the CORS headers onto the Node response of a held
 * connection (SSE stream, long-poll hold).
 *
 * NestJS 12's FastifyAdapter copies the headers @fastify/cors set on the reply to
 * `reply.raw` (`setHeader`) on every request, so that a response a middleware ends
 * itself carries them. The held-connection routes write their own head, CORS headers
 * included, from the reply (`hijackedHead()`), and nothing else ends them. The copy
 * there is not only redundant: a Node response with headers already set stores every
 * header of its head, as `[name, value]` pairs in a per-response map, for the
 * response's whole life. Every other route keeps NestJS's behaviour.
 *
 * Returns false when the adapter has no such step (a NestJS that no longer copies):
 * then there is nothing to skip. `held-response-cors.spec.ts` pins the installed
 * NestJS's behaviour.
 */
export function skipCorsCopyOnHeldResponses(adapter: object): boolean {
  const target = adapter as Partial<CorsCopy>;
  const copy = target.copyCorsHeadersToRaw;
  if (typeof copy !== 'function') return false;
  target.copyCorsHeadersToRaw = function (this: unknown, reply: FastifyReply): void {
    const route = reply.request.routeOptions.url;
    if (route !== undefined && Object.hasOwn(HTTP_CONNECTION_ROUTES, route)) return;
    copy.call(this, reply);
  };
  return true;
}
