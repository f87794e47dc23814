import type { FastifyReply } from 'fastify';
import {
  errorBody,
  HTTP_STATUS_BY_CODE,
  retryAfterSeconds,
  type GatewayError,
} from '@app/contracts';
import { SECURITY_HEADERS } from './security-headers';

const API_HEADERS = Object.entries(SECURITY_HEADERS.api);

/** Header values as Node's writeHead takes them. */
export type HeadHeaders = Record<string, number | string | string[] | undefined>;

/**
 * The head of a response a handler writes itself after `reply.hijack()` (SSE streams,
 * held long-polls), where Fastify's send path, and so its onSend hooks, never run: what
 * Fastify and its plugins have set on the reply so far (CORS), the API security headers,
 * then the handler's own.
 */
export function hijackedHead(reply: FastifyReply, own: HeadHeaders): HeadHeaders {
  // getHeaders() returns a fresh object: filled in place, no further copies (a held
  // long-poll answers once per event, so this is on its hot path).
  const head: HeadHeaders = reply.getHeaders();
  for (const [name, value] of API_HEADERS) head[name] = value;
  for (const name in own) head[name] = own[name];
  return head;
}

/** Ends a hijacked reply with a JSON body (or none, for 204). */
export function endHijacked(
  reply: FastifyReply,
  status: number,
  body: unknown,
  own: HeadHeaders = {},
): void {
  const res = reply.raw;
  if (body === undefined) {
    res.writeHead(status, hijackedHead(reply, own));
    res.end();
    return;
  }
  endHijackedJson(reply, status, JSON.stringify(body), own);
}

/** endHijacked with a body already serialized to JSON (a long-poll answer built from cached parts). */
export function endHijackedJson(
  reply: FastifyReply,
  status: number,
  json: string,
  own: HeadHeaders = {},
): void {
  const res = reply.raw;
  res.writeHead(
    status,
    hijackedHead(reply, {
      ...own,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(json),
    }),
  );
  res.end(json);
}

/**
 * Ends a hijacked reply with a typed error: its status, the error body and, when the
 * error says when to retry, `Retry-After`.
 */
export function endHijackedError(reply: FastifyReply, err: GatewayError): void {
  const retry =
    err.retryAfterMs !== undefined ? { 'retry-after': retryAfterSeconds(err.retryAfterMs) } : {};
  endHijacked(reply, HTTP_STATUS_BY_CODE[err.code], errorBody(err), retry);
}
