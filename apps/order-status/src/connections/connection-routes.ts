/**
 * HTTP routes that hold a connection open for a stream or a poll, with their transport
 * label (the same labels the transports give the bus). They get an opened and a closed
 * line from ConnectionLog (see LogConnection) instead of pino-http's line per request;
 * every other route is an ordinary request, logged once by pino-http.
 */
export const HTTP_CONNECTION_ROUTES: Readonly<Record<string, string>> = {
  '/v1/orders/:orderId/stream': 'sse',
  '/v1/orders/:orderId/events': 'long-poll',
};
