import type { IncomingMessage } from 'node:http';

/**
 * Whether a WebSocket or socket.io handshake may proceed, judged by its Origin header. Browsers always
 * send Origin on WebSocket and cross-origin XHR/fetch, and a page cannot forge it, so this
 * stops other sites from opening sockets with a visitor's browser (cross-site WebSocket
 * hijacking), which CORS alone does not: CORS only governs what a page may read, and the
 * websocket transport is not subject to it at all.
 *
 * Allowed: the same origin as the request's Host (the demo page served at `/`), and the
 * configured allow-list (`WS_CORS_ORIGINS`). No Origin at all is allowed: that is a
 * non-browser client (the load test, grpcurl-like tools), which could send any Origin it
 * liked, so refusing it would add no protection; such clients still need a token.
 */
export function isOriginAllowed(
  origin: string | undefined,
  host: string | undefined,
  allowList: readonly string[],
): boolean {
  if (origin === undefined) return true;
  if (allowList.includes(origin)) return true;
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** engine.io's `allowRequest` hook: runs on the handshake of both polling and websocket. */
export function originAllowRequest(
  allowList: readonly string[],
): (req: IncomingMessage, callback: (err: string | null | undefined, ok: boolean) => void) => void {
  return (req, callback) => {
    const ok = isOriginAllowed(req.headers.origin, req.headers.host, allowList);
    callback(ok ? null : 'origin not allowed', ok);
  };
}
