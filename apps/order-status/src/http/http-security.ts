import fastifyCookie from '@fastify/cookie';
import fastifyHelmet from '@fastify/helmet';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AppConfig } from '../config/app-config';

/**
 * The Content-Security-Policy of every HTTP response. The demo page at `/` is served
 * from this origin with its scripts and styles as files (no CDN, no inline script), and
 * talks to this origin only (fetch, EventSource, socket.io over ws/wss), so 'self' is
 * all it needs. `connect-src` lists ws:/wss: explicitly because older browsers do not
 * count a WebSocket to the same host as 'self' (CSP Level 2).
 */
export const CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  // Inline style attributes are common in small demo pages and carry no script.
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'", 'ws:', 'wss:'],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
} as const;

/** Headers browsers may send cross-origin (CORS preflight allow-list). */
const CORS_ALLOWED_HEADERS = ['authorization', 'content-type', 'last-event-id'];

/**
 * HTTP-level security, registered before the routes: cookie parsing (the SSE session
 * cookie), security headers (@fastify/helmet, with the CSP above) and a CORS allow-list
 * (`HTTP_CORS_ORIGINS`; same-origin requests need no CORS at all).
 */
export async function applyHttpSecurity(
  app: NestFastifyApplication,
  config: AppConfig,
): Promise<void> {
  await app.register(fastifyCookie);
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: { directives: { ...CONTENT_SECURITY_POLICY } },
  });
  app.enableCors({
    origin: [...config.auth.corsOrigins],
    credentials: true,
    methods: ['GET', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    maxAge: 600,
  });
}
