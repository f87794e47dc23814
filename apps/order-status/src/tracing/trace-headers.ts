import type { IncomingHttpHeaders } from 'node:http';
import type { Metadata } from '@grpc/grpc-js';
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';

/** The W3C trace context headers (https://www.w3.org/TR/trace-context/#header-name). */
export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

/** The publish APIs, as the `order_status.publish_api` attribute names them. */
export type PublishApi = 'rest' | 'grpc' | 'simulator';

/**
 * Where a publish came from: its API and the caller's trace context, as sent (validated
 * by the propagator: a malformed `traceparent` starts a new trace, as the W3C spec says).
 */
export interface PublishOrigin {
  readonly api: PublishApi;
  readonly traceparent?: string;
  readonly tracestate?: string;
}

/** A REST request's origin: its `traceparent` and `tracestate` headers. */
export function restOrigin(headers: IncomingHttpHeaders): PublishOrigin {
  return {
    api: 'rest',
    traceparent: single(headers[TRACEPARENT]),
    tracestate: joined(headers[TRACESTATE]),
  };
}

/** A gRPC call's origin: the same headers, as metadata (gRPC carries them alike). */
export function grpcOrigin(metadata: Metadata): PublishOrigin {
  const text = (key: string) => metadata.get(key).filter((v): v is string => typeof v === 'string');
  return {
    api: 'grpc',
    traceparent: single(text(TRACEPARENT)),
    tracestate: joined(text(TRACESTATE)),
  };
}

/** The REST publish's origin, as a handler parameter. */
export const RestPublishOrigin = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): PublishOrigin =>
    restOrigin(ctx.switchToHttp().getRequest<{ headers: IncomingHttpHeaders }>().headers),
);

/** More than one traceparent is invalid (W3C trace context, 3.2): none is taken. */
function single(value: string | readonly string[] | undefined): string | undefined {
  if (typeof value === 'string') return value;
  return value?.length === 1 ? value[0] : undefined;
}

/** Several tracestate headers are one list, joined with commas (W3C trace context, 3.3). */
function joined(value: string | readonly string[] | undefined): string | undefined {
  if (typeof value === 'string') return value;
  return value === undefined || value.length === 0 ? undefined : value.join(',');
}
