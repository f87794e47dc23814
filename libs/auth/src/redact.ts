/**
 * Log redaction for credentials: tokens travel in headers and cookies, stream tickets in
 * URLs; none of them may reach a log line. For pino / pino-http, `REDACTED_LOG_PATHS`
 * goes into `redact.paths` and `redactUrl` into the request serializer.
 */
export const REDACTED_LOG_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.query.ticket',
  'res.headers["set-cookie"]',
];

/** The URL with every `ticket` (and `access_token`) query value replaced by `[REDACTED]`. */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:ticket|access_token)=)[^&#]*/gi, '$1[REDACTED]');
}
