import {
  Catch,
  HttpException,
  Logger,
  NotFoundException,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import {
  ErrorCode,
  errorBody,
  GatewayError,
  HTTP_STATUS_BY_CODE,
  retryAfterSeconds,
} from '@app/contracts';

const CODE_BY_HTTP_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: ErrorCode.InvalidArgument,
  401: ErrorCode.Unauthenticated,
  403: ErrorCode.PermissionDenied,
  404: ErrorCode.NotFound,
  409: ErrorCode.FailedPrecondition,
  413: ErrorCode.InvalidArgument,
  415: ErrorCode.InvalidArgument,
  429: ErrorCode.ResourceExhausted,
  503: ErrorCode.Unavailable,
  504: ErrorCode.DeadlineExceeded,
};

/**
 * One error shape for every HTTP route: `{ error: { code, message } }` with the status
 * from the shared table, whether the failure is ours (GatewayError), Nest's (validation,
 * unknown route) or Fastify's (broken JSON, body too large).
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpErrorFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') return;
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const err = this.toGatewayError(exception);
    if (err.code === ErrorCode.Internal) this.logger.error(exception);
    // Keep a more precise 4xx from Nest or Fastify (413, 415, ...) over the table's.
    const status = httpStatusOf(exception) ?? HTTP_STATUS_BY_CODE[err.code];
    // A hijacked reply (SSE) has already sent its head; nothing more can be said there.
    if (reply.sent || reply.raw.headersSent) {
      reply.raw.end();
      return;
    }
    // RFC 6750 section 3: a 401 names the scheme the client should use.
    if (status === 401) void reply.header('www-authenticate', 'Bearer realm="order-status"');
    if (err.retryAfterMs !== undefined) {
      void reply.header('retry-after', retryAfterSeconds(err.retryAfterMs));
    }
    void reply.status(status).send(errorBody(err));
  }

  private toGatewayError(exception: unknown): GatewayError {
    if (exception instanceof GatewayError) return exception;
    if (exception instanceof HttpException) {
      return new GatewayError(
        CODE_BY_HTTP_STATUS[exception.getStatus()] ?? ErrorCode.Internal,
        isUnknownRoute(exception) ? 'no such route' : messageOf(exception.getResponse()),
      );
    }
    // Fastify's own errors (FST_ERR_CTP_INVALID_JSON, FST_ERR_CTP_BODY_TOO_LARGE, ...)
    // carry a 4xx statusCode and a message safe to show.
    const status = httpStatusOf(exception);
    if (status !== undefined) {
      return new GatewayError(
        CODE_BY_HTTP_STATUS[status] ?? ErrorCode.InvalidArgument,
        (exception as Error).message,
      );
    }
    return new GatewayError(ErrorCode.Internal, 'internal error');
  }
}

function messageOf(response: string | object): string {
  if (typeof response === 'string') return response;
  const m = (response as { message?: unknown }).message;
  if (Array.isArray(m)) return m.map(String).join('; ');
  return typeof m === 'string' ? m : 'request failed';
}

/**
 * Nest's answer to an unmatched route, `Cannot GET /the/whole/path`: it would echo the
 * client's input (ids, tokens pasted into a path) back to it.
 */
function isUnknownRoute(exception: HttpException): boolean {
  return (
    exception instanceof NotFoundException &&
    /^Cannot [A-Z]+ \//.test(messageOf(exception.getResponse()))
  );
}

/** The 4xx status an exception from Nest or Fastify carries, if any. */
function httpStatusOf(exception: unknown): number | undefined {
  const status =
    exception instanceof HttpException
      ? exception.getStatus()
      : (exception as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}
