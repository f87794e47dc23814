import { applyDecorators } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCookieAuth,
  ApiHeader,
  ApiParam,
  ApiQuery,
  ApiResponse,
  ApiSecurity,
  DECORATORS,
  type HeadersObject,
} from '@nestjs/swagger';
import {
  DOMAIN_NAME_PATTERN,
  ErrorCode,
  EXPECTED_DOMAIN_PARAM,
  HTTP_STATUS_BY_CODE,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENCY_KEY_PATTERN,
  ORDER_ID_MAX_LENGTH,
  ORDER_ID_PATTERN,
} from '@app/contracts';
import { ErrorBody } from './api-schemas';

/** Names of the security schemes declared in openapi-document.ts. */
export const SecurityScheme = {
  Bearer: 'bearer',
  SessionCookie: 'session-cookie',
  StreamTicket: 'stream-ticket',
} as const;

/** What each code means on this API; the body is always ErrorBody. */
const ERROR_MEANING: Readonly<Record<ErrorCode, string>> = {
  [ErrorCode.InvalidArgument]:
    'A parameter, header or body field is malformed (the message names it).',
  [ErrorCode.Unauthenticated]: 'No credentials, or they are invalid or expired.',
  [ErrorCode.PermissionDenied]: "The token lacks the scope, or the order is someone else's.",
  [ErrorCode.NotFound]: 'No such order (or route).',
  [ErrorCode.FailedPrecondition]:
    'Conflicts with the current state (e.g. a transition the life cycle forbids, an idempotency key reused for another request, or a stream subscribed with another `domain` than the service streams).',
  [ErrorCode.ResourceExhausted]:
    'A limit was reached (connections per principal, publish rate). Retry after `Retry-After`.',
  [ErrorCode.Internal]: 'An unexpected failure; details are logged, never sent.',
  [ErrorCode.Unavailable]:
    'The store is unreachable or the instance is draining. Retry after `Retry-After`.',
  [ErrorCode.DeadlineExceeded]: 'The work did not finish in time.',
};

const RETRY_AFTER = {
  'Retry-After': {
    description: 'Seconds to wait before retrying (when the service knows).',
    schema: { type: 'integer', minimum: 1 },
  },
} as const;

/**
 * Error answers of a route, one per code, with the typed error body. Statuses come from
 * HTTP_STATUS_BY_CODE, the same table the error filter uses.
 */
export function ApiErrors(...codes: ErrorCode[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...codes.map((code) =>
      ApiResponse({
        status: HTTP_STATUS_BY_CODE[code],
        description: `\`${code}\`: ${ERROR_MEANING[code]}`,
        type: ErrorBody,
        ...(code === ErrorCode.ResourceExhausted || code === ErrorCode.Unavailable
          ? { headers: RETRY_AFTER }
          : {}),
      }),
    ),
  );
}

/** The errors every authenticated order route can answer. */
export const ORDER_ROUTE_ERRORS = [
  ErrorCode.InvalidArgument,
  ErrorCode.Unauthenticated,
  ErrorCode.PermissionDenied,
  ErrorCode.NotFound,
  ErrorCode.Unavailable,
] as const;

/** `{orderId}` in a route path. */
export function ApiOrderIdParam(): MethodDecorator & ClassDecorator {
  return ApiParam({
    name: 'orderId',
    description: `1-${ORDER_ID_MAX_LENGTH} characters of [A-Za-z0-9_-], starting with a letter or digit.`,
    schema: { type: 'string', pattern: ORDER_ID_PATTERN.source, maxLength: ORDER_ID_MAX_LENGTH },
    example: 'order-1',
  });
}

/** `?domain=`: the domain the subscriber decodes, refused with 409 when it is not the service's. */
export function ApiExpectedDomainQuery(): MethodDecorator & ClassDecorator {
  return ApiQuery({
    name: EXPECTED_DOMAIN_PARAM,
    required: false,
    description:
      "The stream domain the client decodes (e.g. `order`). Another domain than the service's is answered with 409 `failed_precondition` naming both; absent: not checked.",
    schema: { type: 'string', pattern: DOMAIN_NAME_PATTERN.source },
    example: 'order',
  });
}

/**
 * A route that takes no credentials (probes, metrics, the demo token). `security: []`
 * says so (OpenAPI 3.0.3, Operation Object: an empty array removes any top-level
 * requirement), and 431 is the client error every route can answer: Node's HTTP server
 * refuses request headers past its limit before any route runs.
 */
export function ApiPublic(): MethodDecorator {
  return applyDecorators(
    (_target: object, _key: string | symbol, descriptor: PropertyDescriptor) => {
      const handler = descriptor.value as object;
      const operation = Reflect.getMetadata(DECORATORS.API_OPERATION, handler) as
        object | undefined;
      Reflect.defineMetadata(DECORATORS.API_OPERATION, { ...operation, security: [] }, handler);
    },
    ApiResponse({
      status: 431,
      description: "The request's headers are larger than the server accepts (no body).",
    }),
  );
}

/** A route that takes a bearer token only (the default under /v1/). */
export const ApiBearer = (): MethodDecorator & ClassDecorator =>
  ApiBearerAuth(SecurityScheme.Bearer);

/**
 * The SSE route: any one of a bearer token, a single-use stream ticket for the order, or
 * the session cookie (EventSource cannot send headers). OpenAPI lists alternatives as
 * separate security requirements.
 */
export function ApiStreamCredentials(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiBearerAuth(SecurityScheme.Bearer),
    ApiSecurity(SecurityScheme.StreamTicket),
    ApiCookieAuth(SecurityScheme.SessionCookie),
  );
}

/** What the JSON-body gate answers (http/json-bodies.ts) before any handler runs. */
export function ApiJsonBodyErrors(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiResponse({
      status: 413,
      description: '`invalid_argument`: the body is larger than HTTP_BODY_LIMIT_BYTES.',
      type: ErrorBody,
    }),
    ApiResponse({
      status: 415,
      description: '`invalid_argument`: the body is not `application/json`.',
      type: ErrorBody,
    }),
  );
}

/** The optional `Idempotency-Key` request header of the publish routes. */
export function ApiIdempotencyKey(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'Makes retries safe (draft-ietf-httpapi-idempotency-key-header): a retry with the same key (same caller and order, within IDEMPOTENCY_WINDOW_MS) and the same body publishes nothing and answers the first event again.',
      schema: {
        type: 'string',
        pattern: IDEMPOTENCY_KEY_PATTERN.source,
        maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
      },
    }),
    ApiResponse({
      status: 422,
      description:
        '`failed_precondition`: the `Idempotency-Key` was already used with another body (any field) or for the other kind of publish.',
      type: ErrorBody,
    }),
  );
}

/** The header a publish answer carries when it replays an earlier request's event. */
export const IDEMPOTENT_REPLAYED_HEADER: HeadersObject = {
  'Idempotent-Replayed': {
    description: '`true` when this is the answer of an earlier request with the same key.',
    schema: { type: 'string', enum: ['true'] },
  },
};
