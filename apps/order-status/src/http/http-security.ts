import fastifyCookie from '@fastify/cookie';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AppConfig } from '../config/app-config';
import { DOCS_PATH } from '../openapi/docs-page';
import { CLIENT_LIBRARY_PATHS } from '../ops/demo-page';
import { skipCorsCopyOnHeldResponses } from './held-response-cors';
import { registerOrderIdGate } from '../orders/order-id-gate';
import { requireJsonBodies } from './json-bodies';
import { SECURITY_HEADERS, type HeaderSet } from './security-headers';

/** Headers browsers may send cross-origin (CORS preflight allow-list). */
const CORS_ALLOWED_HEADERS = ['authorization', 'content-type', 'last-event-id'];

/**
 * Routes of the demo page: @fastify/static's, registered with prefix '/' (see
 * ops/demo-page.ts). Every other route is API and gets the API header set.
 */
const PAGE_ROUTES = new Set(['/', '/*']);

/** The path of a request URL, without its query. */
function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/**
 * The header set for a route: the demo page's (the client library's for its builds), the
 * API docs' or the API's.
 */
function headersFor(route: string, url: string): HeaderSet {
  if (PAGE_ROUTES.has(route)) {
    return CLIENT_LIBRARY_PATHS.has(pathOf(url)) ? SECURITY_HEADERS.library : SECURITY_HEADERS.page;
  }
  if (route === DOCS_PATH || route.startsWith(`${DOCS_PATH}/`)) return SECURITY_HEADERS.docs;
  return SECURITY_HEADERS.api;
}

/**
 * HTTP-level security, registered before the routes: cookies (the SSE session cookie,
 * parsed by the auth guard when it needs it), the order-id gate (orders/order-id-gate.ts),
 * JSON-only bodies (415 otherwise), security headers (helmet's, recorded once at
 * start-up: see security-headers.ts) and a CORS allow-list (`HTTP_CORS_ORIGINS`;
 * same-origin requests need no CORS at all).
 */
export async function applyHttpSecurity(
  app: NestFastifyApplication,
  config: AppConfig,
): Promise<void> {
  // No parsing hook: a request's cookies are read only by the auth guard, and only for a
  // stream request without a token or ticket (the SSE session cookie), so the guard
  // parses them then. With the hook every request, every poll included, parsed its
  // Cookie header and got a cookie object and a Map for cookies it might set.
  // reply.setCookie / clearCookie work without it.
  await app.register(fastifyCookie, { hook: false });
  // Added as the answer goes out (onSend), not when the request arrives: a held
  // long-poll then carries none of them while it waits. Responses a handler writes
  // itself (SSE hijacks its reply, so onSend never runs) put SECURITY_HEADERS.api in
  // their own head.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onSend', (req, reply, payload, done) => {
      void reply.headers(headersFor(req.routeOptions.url ?? '', req.url));
      done(null, payload);
    });
  // Before the routes and the auth guard: a malformed id is a 400 whoever asks.
  registerOrderIdGate(app.getHttpAdapter().getInstance());
  requireJsonBodies(app.getHttpAdapter().getInstance());
  app.enableCors({
    origin: [...config.auth.corsOrigins],
    credentials: true,
    methods: ['GET', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    maxAge: 600,
  });
  skipCorsCopyOnHeldResponses(app.getHttpAdapter());
}
