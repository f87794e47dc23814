/**
 * Most orders one socket may follow at once is configurable: `WS_MAX_SUBSCRIPTIONS_PER_SOCKET`
 * (config/auth-config.ts, default 100); a further `subscribe` is answered with
 * `resource_exhausted`. It bounds the bus subscriptions (and their queues) one
 * connection can hold, whatever the client sends.
 */

/**
 * Packets the engine may hold unsent for one connection before its sinks report "full"
 * and the bus starts queueing (and conflating) instead. Small on purpose: beyond it, the
 * bounded bus queue is the one place where a slow client's backlog lives.
 * @default 16
 */
export const ENGINE_WRITE_BUFFER_HIGH_WATER = 16;
