import type { IncomingMessage } from 'node:http';
import type { Params } from 'nestjs-pino';
import { stdTimeFunctions } from 'pino';
import { REDACTED_LOG_PATHS, redactUrl } from '@app/auth';
import type { AppConfig } from '../config/app-config';
import { HTTP_CONNECTION_ROUTES } from './connection-log.interceptor';

/**
 * Requests pino-http does not log: probes and scrapes (every few seconds, forever), the
 * demo page's assets, and the streaming routes, which get their own opened/closed lines
 * from ConnectionLog instead of one line per poll.
 */
const QUIET_PATH = /^\/(?:health(?:\/|$)|metrics$|$|index\.html$|assets\/|vendor\/|favicon)/;
const CONNECTION_PATH = new RegExp(
  `^(?:${Object.keys(HTTP_CONNECTION_ROUTES)
    .map((route) => route.replace(/:[A-Za-z]+/g, '[^/?]+'))
    .join('|')})(?:\\?|$)`,
);

export function isQuietRequest(url: string): boolean {
  return QUIET_PATH.test(url) || CONNECTION_PATH.test(url);
}

/**
 * nestjs-pino (pino-http underneath): JSON lines on stdout at LOG_LEVEL, one line per
 * ordinary request, credentials redacted wherever they travel (Authorization, cookies,
 * `?ticket=` and `?access_token=` in URLs; see @app/auth redact.ts).
 */
export function loggerParams(config: AppConfig): Params {
  return {
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
      autoLogging: { ignore: (req: IncomingMessage) => isQuietRequest(req.url ?? '/') },
    },
  };
}
