import type { FastifyInstance } from 'fastify';
import { errorBody, ErrorCode, GatewayError } from '@app/contracts';

const NOT_JSON = errorBody(
  new GatewayError(ErrorCode.InvalidArgument, 'request bodies must be application/json'),
);

/**
 * The API takes JSON bodies only: 415 for anything else that carries a body. A form
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
