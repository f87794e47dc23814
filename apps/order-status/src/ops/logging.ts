import type { Params } from 'nestjs-pino';
import { stdTimeFunctions } from 'pino';
import type { Options } from 'pino-http';
import { REDACTED_LOG_PATHS, redactUrl } from '@app/auth';
import type { AppConfig } from '../config/app-config';

/**
 * Requests pino-http does not log: probes and scrapes (every few seconds, forever) and
 * the demo page's assets.
 */
const QUIET_PATH = /^\/(?:health(?:\/|$)|metrics$|$|index\.html$|assets\/|vendor\/|favicon)/;

export function isQuietRequest(url: string): boolean {
  return QUIET_PATH.test(url);
}

/**
 * What pino-http adds per request: the completion line's fields. Shared by the root
 * logger's options below and the request-log hook (request-log.ts), which also decides
 * which requests are logged at all.
 */
export const REQUEST_LOG_OPTIONS = {
  serializers: {
    req: (req: { url?: string }) => {
      if (typeof req.url === 'string') req.url = redactUrl(req.url);
      return req;
    },
  },
  // Lines logged while handling a request carry its id, not a copy of the request.
  quietReqLogger: true,
} satisfies Options;

/**
 * nestjs-pino (pino-http underneath): JSON lines on stdout at LOG_LEVEL, one line per
 * ordinary request, credentials redacted wherever they travel (Authorization, cookies,
 * `?ticket=` and `?access_token=` in URLs; see @app/auth redact.ts).
 */
export function loggerParams(config: AppConfig): Params {
  return {
    // No Nest middleware: pino-http runs as a Fastify hook that skips the held routes
    // (request-log.ts). Mounted on every path with the held routes in `exclude`, every
    // poll still went through middie and Nest's exclusion check.
    forRoutes: [],
    pinoHttp: {
      level: config.logLevel,
      timestamp: stdTimeFunctions.isoTime,
      redact: { paths: [...REDACTED_LOG_PATHS, 'req.query.access_token'], censor: '[REDACTED]' },
      ...REQUEST_LOG_OPTIONS,
    },
  };
}
