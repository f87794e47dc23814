import type { FastifyInstance } from 'fastify';
import { errorBody, ErrorCode, GatewayError, isValidOrderId } from '@app/contracts';

/** The path prefix of every route that takes `:orderId` (snapshot, stream, events, publish). */
const ORDERS_PREFIX = '/v1/orders/';

/** Never echoes the id: a client's input does not belong in an error it may display. */
const MALFORMED = errorBody(
  new GatewayError(
    ErrorCode.InvalidArgument,
    'orderId must be 1-64 characters of [A-Za-z0-9_-], starting with a letter or digit',
  ),
);

/**
 * Rejects a malformed order id in the path with 400 before anything else looks at the
 * request: routing (an id longer than Fastify's maxParamLength would otherwise fall
 * through to the demo page's wildcard, 404 or 403), the auth guard (401/403 would say
 * more about a request that cannot name an order) and the handlers. OrderIdPipe and the
 * transports still validate; this only makes the answer the same on every route.
 */
export function registerOrderIdGate(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (req, reply, done) => {
    const { url } = req.raw;
    if (url === undefined || !url.startsWith(ORDERS_PREFIX)) {
      done();
      return;
    }
    const end = url.slice(ORDERS_PREFIX.length).search(/[/?#]/);
    const raw =
      end < 0
        ? url.slice(ORDERS_PREFIX.length)
        : url.slice(ORDERS_PREFIX.length, ORDERS_PREFIX.length + end);
    if (isValidOrderId(decodeSegment(raw))) {
      done();
      return;
    }
    void reply.status(400).send(MALFORMED);
  });
}

/** The path segment as the router will see it, or undefined for broken percent-encoding. */
function decodeSegment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}
