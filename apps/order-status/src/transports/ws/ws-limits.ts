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

/**
 * The bytes of every socket's subscriptions together are bounded by
 * `MEMORY_WS_SUBSCRIPTIONS_MAX_BYTES` (config/memory-config.ts); past it a `subscribe` is
 * answered `resource_exhausted` with retry advice.
 *
 * What one subscription holds besides its order id: the socket's Map slot and entry, its
 * sink, the bus subscriber and its queue and the channel's Set slot, before any event is
 * queued (measured in socket-subscriptions.spec.ts). Queued events are shared with the
 * order's replay ring and bounded by `BUS_QUEUE_CAPACITY`.
 */
export const WS_SUBSCRIPTION_OVERHEAD_BYTES = 800;

/** Retry advice when the instance is at its subscription bytes. @default 5_000 ms */
export const WS_SUBSCRIPTIONS_RETRY_AFTER_MS = 5_000;

/** The `structure` label of socket.io subscriptions in `order_memory_*`. */
export const WS_SUBSCRIPTIONS_STRUCTURE = 'ws_subscriptions';
