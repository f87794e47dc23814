import type { FastifyReply } from 'fastify';

/**
 * Calls `onGone` once when the response is over: finished, or the client went away.
 *
 * On HTTP/1.1 the response's 'close' covers both (it fires when the socket closes). On
 * HTTP/2 a client's RST_STREAM closes the request (Http2ServerRequest 'close') but the
 * compat response only emits 'close' at its next write, which for a held long-poll or a
 * quiet SSE stream may be many seconds later; listening on the request too releases
 * the bus subscription at once. Returns a function that removes the listeners.
 */
export function onClientGone(reply: FastifyReply, onGone: () => void): () => void {
  const req = reply.request.raw;
  const res = reply.raw;
  const http2 = req.httpVersionMajor === 2;
  let done = false;
  const fire = () => {
    if (done) return;
    done = true;
    onGone();
  };
  res.on('close', fire);
  if (http2) req.on('close', fire);
  return () => {
    res.off('close', fire);
    if (http2) req.off('close', fire);
  };
}
