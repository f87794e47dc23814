import type { IncomingMessage } from 'node:http';
import { RequestMethod } from '@nestjs/common';
import type { Params } from 'nestjs-pino';
import { stdTimeFunctions } from 'pino';
import { REDACTED_LOG_PATHS, redactUrl } from '@app/auth';
import type { AppConfig } from '../config/app-config';
import { HTTP_CONNECTION_ROUTES } from './connection-routes';

/**
 * Requests pino-http does not log: probes and scrapes (every few seconds, forever) and
 * the demo page's assets.
 */
const QUIET_PATH = /^\/(?:health(?:\/|$)|metrics$|$|index\.html$|assets\/|vendor\/|favicon)/;

export function isQuietRequest(url: string): boolean {
  return QUIET_PATH.test(url);
}

/**
 * Routes pino-http does not see at all: the streaming routes, which get their own
 * opened/closed lines from ConnectionLog instead of one line per poll. Ignoring them in
 * `autoLogging` is not enough: pino-http still makes two child loggers, the listeners
 * and a request-scoped store per request, which a held SSE stream or long-poll keeps
 * for its whole life (measured as idle memory per connection). Lines logged while handling
 * them fall back to the root logger, without a request id.
 */
const UNLOGGED_ROUTES = Object.keys(HTTP_CONNECTION_ROUTES).map((route) => ({
  path: route.slice(1),
  method: RequestMethod.GET,
}));

/**
 * Every path, written so that @fastify/middie keeps it. nestjs-pino's default,
 * `{/*splat}`, has no leading slash; middie 9.3 (NestJS 12's Fastify adapter) prefixes one,
 * and `/{/*splat}` matches only URLs that start with `//`: no request was logged at all.
 */
const ALL_ROUTES = [{ path: '/{*splat}', method: RequestMethod.ALL }];

/**
 * nestjs-pino (pino-http underneath): JSON lines on stdout at LOG_LEVEL, one line per
 * ordinary request, credentials redacted wherever they travel (Authorization, cookies,
 * `?ticket=` and `?access_token=` in URLs; see @app/auth redact.ts).
 */
export function loggerParams(config: AppConfig): Params {
  return {
    forRoutes: ALL_ROUTES,
    exclude: UNLOGGED_ROUTES,
    pinoHttp: {
      level: config.logLevel,
      timestamp: stdTimeFunctions.isoTime,
      redact: { paths: [...REDACTED_LOG_PATHS, 'req.query.access_token'], censor: '[REDACTED]' },
      serializers: {
        req: (req: { url?: string }) => {
          if (typeof req.url === 'string') req.url = redactUrl(req.url);
          return req;
        },
      },
      // Lines logged while handling a request carry its id, not a copy of the request.
      quietReqLogger: true,
      // `originalUrl`: middie has cut the middleware's mount path off `url` by then, so
      // every request without a query string read as `/` (the demo page) and went unlogged.
      autoLogging: {
        ignore: (req: IncomingMessage & { originalUrl?: string }) =>
          isQuietRequest(req.originalUrl ?? req.url ?? '/'),
      },
    },
  };
}
