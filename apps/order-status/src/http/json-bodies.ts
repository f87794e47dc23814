import type { FastifyInstance } from 'fastify';
import { errorBody, ErrorCode, GatewayError } from '@app/contracts';

const NOT_JSON = errorBody(
  new GatewayError(ErrorCode.InvalidArgument, 'request bodies must be application/json'),
);

/** @default 32 levels of arrays and objects in a request body (the API's go 2 deep) */
export const MAX_JSON_BODY_DEPTH = 32;

const TOO_DEEP = errorBody(
  new GatewayError(
    ErrorCode.InvalidArgument,
    `request bodies must not nest deeper than ${MAX_JSON_BODY_DEPTH} levels`,
  ),
);

/**
 * The API takes JSON bodies only: 415 for anything else that carries a body, and 400 for
 * one nested deeper than MAX_JSON_BODY_DEPTH. A form
 * post (`curl -d`, an HTML form) is a CORS "simple request" that browsers send cross-
 * origin without a preflight; accepting it would let any page publish with a cookie or
 * a leaked token. socket.io's polling POSTs never reach Fastify (engine.io answers
 * them first).
 */
export function requireJsonBodies(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (req, reply, done) => {
    if (!hasBody(req.headers) || isJson(req.headers['content-type'])) {
      done();
      return;
    }
    void reply.status(415).send(NOT_JSON);
  });
  // After parsing, before validation: class-transformer walks a body recursively, and a
  // body a few KB long nested a few thousand deep overflows its stack (a 500 and a logged
  // RangeError on every such request).
  fastify.addHook('preValidation', (req, reply, done) => {
    if (!nestsDeeperThan(req.body, MAX_JSON_BODY_DEPTH)) {
      done();
      return;
    }
    void reply.status(400).send(TOO_DEEP);
  });
}

/** Whether `value` has arrays or objects nested more than `depth` levels; stops there. */
function nestsDeeperThan(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth === 0) return true;
  for (const child of Object.values(value)) {
    if (nestsDeeperThan(child, depth - 1)) return true;
  }
  return false;
}

/** RFC 9110 section 6.4.1: a request has content when it says so (length or chunked). */
function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  return (
    headers['transfer-encoding'] !== undefined || (typeof length === 'string' && length !== '0')
  );
}

/** `application/json`, with or without parameters (`; charset=utf-8`). */
function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  return contentType.split(';', 1)[0].trim().toLowerCase() === 'application/json';
}
