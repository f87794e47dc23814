import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { DEFAULT_HTTP_PORT, type AppConfig } from '../config/app-config';
import { SecurityScheme } from './api-decorators';

/** The document's version: the API's, not the package's (a release changes no route). */
export const API_VERSION = '1.0.0';

const DESCRIPTION = [
  'REST routes of the order-status gateway: the publish API, the order snapshot, the two',
  'HTTP streaming transports (Server-Sent Events and long-poll) and the credentials',
  'EventSource needs. The same events also travel over socket.io (namespace `/orders`) and',
  'gRPC (`orderstatus.v1.OrderStatusService`, proto/order_status.proto, with server',
  'reflection); docs/asyncapi.yaml describes the SSE, socket.io, raw WebSocket and long-poll channels.',
  '',
  'Every error has the body `{"error": {"code", "message", "retryAfterMs"?}}`; `code` is',
  'one of the ErrorCode values and means the same on every transport.',
].join('\n');

/**
 * The OpenAPI document of `app`'s REST routes. Built from the controllers' decorators,
 * so the same function serves `/docs` and writes docs/openapi.json (scripts/openapi).
 * `config` only supplies names that are configurable (the session cookie's).
 */
export function buildOpenApiDocument(app: INestApplication, config: AppConfig): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Order-status gateway')
    .setDescription(DESCRIPTION)
    .setVersion(API_VERSION)
    .setLicense('MIT', 'https://opensource.org/licenses/MIT')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          'A JWT (HS256 with AUTH_HS256_SECRET, or RS256/ES256 from AUTH_JWKS_FILE/AUTH_JWKS_URL) with the configured issuer and audience. Scopes: `orders:read` (own orders), `orders:read:any`, `orders:write`.',
      },
      SecurityScheme.Bearer,
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'query',
        name: 'ticket',
        description:
          'A single-use stream ticket from `POST /v1/stream-tickets`, valid for one order and a few seconds (SSE only).',
      },
      SecurityScheme.StreamTicket,
    )
    .addCookieAuth(
      config.auth.cookieName,
      {
        type: 'apiKey',
        in: 'cookie',
        name: config.auth.cookieName,
        description:
          'The HttpOnly session cookie set by `POST /v1/session` (SSE only: EventSource sends it, and re-sends it on reconnects).',
      },
      SecurityScheme.SessionCookie,
    )
    .addTag('orders', 'Publish status changes, read an order')
    .addTag(
      'streams',
      'Follow an order over HTTP: Server-Sent Events, long-poll, the raw WebSocket upgrade',
    )
    .addTag('credentials', 'Credentials for EventSource, which cannot send headers')
    .addTag('admin', 'Simulator control (ADMIN_ENABLED)')
    .addTag('ops', 'Health and metrics')
    // Relative first: the service serving this document, which is what /docs calls.
    .addServer('/', 'The service serving this document')
    .addServer(`http://127.0.0.1:${DEFAULT_HTTP_PORT}`, '`npm start` on this machine (HTTP_PORT)')
    .addServer('https://127.0.0.1:8443', 'The demo stack through nginx (docker compose up)')
    .build();
  const document = SwaggerModule.createDocument(app, builder, {
    // Stable ids that client generators turn into method names.
    operationIdFactory: (_controller, method) => method,
  });
  sortParameters(document);
  unwrapLoneAllOf(document);
  return document;
}

/**
 * `{allOf: [{$ref}]}` with nothing beside it becomes the `$ref` itself: the scanner wraps
 * every enum reference so a description could sit beside it (OpenAPI 3.0 ignores
 * siblings of `$ref`), and a wrapper around one schema says nothing more than the schema.
 */
function unwrapLoneAllOf(node: unknown): void {
  if (typeof node !== 'object' || node === null) return;
  for (const [key, value] of Object.entries(node)) {
    const v = value as { allOf?: unknown[] } | null;
    if (
      v !== null &&
      typeof v === 'object' &&
      Object.keys(v).length === 1 &&
      Array.isArray(v.allOf) &&
      v.allOf.length === 1
    ) {
      (node as Record<string, unknown>)[key] = v.allOf[0];
    }
    unwrapLoneAllOf((node as Record<string, unknown>)[key]);
  }
}

const PARAMETER_ORDER = ['path', 'query', 'header', 'cookie'];

/**
 * Parameters in a fixed order (path, query, header, cookie; by name within each). The
 * scanner's order depends on whether the compiler emitted decorator type metadata (the
 * build and jest do, tsx does not), and the committed document must not.
 */
function sortParameters(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      const params = (operation as { parameters?: unknown[] }).parameters;
      if (!Array.isArray(params)) continue;
      (params as { in: string; name: string }[]).sort(
        (a, b) =>
          PARAMETER_ORDER.indexOf(a.in) - PARAMETER_ORDER.indexOf(b.in) ||
          a.name.localeCompare(b.name),
      );
    }
  }
}
