import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, retryAfterSeconds } from '@app/contracts';
import type { DrainGate } from './drain-gate';

/**
 * A transport's own answer to a request turned away during the drain, for the requests
 * it recognises (SSE: a stream EventSource reconnects from, not an error status).
 */
export interface DrainAnswer {
  accepts(req: FastifyRequest): boolean;
  send(reply: FastifyReply, retryAfterMs: number): void;
}

/** Probes and metrics still answer while the instance drains, so the drain can be watched. */
const ALWAYS_SERVED = /^\/(?:health|metrics)\b/;

/**
 * Requests that reach the service while it drains (an HTTP/1.1 client reusing a kept-
 * alive connection) get reconnect advice instead of a new stream: the first of `answers`
 * that accepts the request answers it, everyone else gets 503 with Retry-After.
 */
export function registerHttpDrainGate(
  fastify: FastifyInstance,
  gate: DrainGate,
  answers: readonly DrainAnswer[],
): void {
  fastify.addHook('onRequest', (req, reply, done) => {
    if (!gate.draining || ALWAYS_SERVED.test(req.url)) {
      done();
      return;
    }
    const retryMs = gate.adviseMs();
    // Connection-specific headers are forbidden in HTTP/2 (RFC 9113 section 8.2.2).
    if (req.raw.httpVersionMajor === 1) void reply.header('connection', 'close');
    void reply.header('cache-control', 'no-store');
    const answer = answers.find((a) => a.accepts(req));
    if (answer !== undefined) {
      answer.send(reply, retryMs);
      return;
    }
    void reply
      .status(503)
      .header('retry-after', retryAfterSeconds(retryMs))
      .send(errorBody(gate.refusal(retryMs)));
  });
}
