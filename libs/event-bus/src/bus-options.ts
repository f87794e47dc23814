/** What a subscriber's queue does when it is full. */
export enum OverflowPolicy {
  /** Keep only the newest event of the order: an order-status client needs the latest status. */
  Conflate = 'conflate',
  /** Drop the oldest queued event to make room. */
  DropOldest = 'drop-oldest',
  /** End the subscription; the client resumes from its last seq (no loss within retention). */
  Disconnect = 'disconnect',
}

export const OVERFLOW_POLICIES: readonly OverflowPolicy[] = Object.values(OverflowPolicy);

/** @default 256 events retained per order for resume */
export const DEFAULT_RING_SIZE = 256;
/** @default 300_000 ms: events older than this are not replayed */
export const DEFAULT_RING_MAX_AGE_MS = 300_000;
/** @default 64 events queued per subscriber before the overflow policy applies */
export const DEFAULT_QUEUE_CAPACITY = 64;
/** @default OverflowPolicy.Conflate */
export const DEFAULT_OVERFLOW_POLICY = OverflowPolicy.Conflate;

/**
 * @default 30_000 ms an order's channel (ring, snapshot, and with a shared store its
 * subscription) stays after its last local subscriber left: a reconnecting client finds
 * it warm, and a long-running instance does not keep every order it ever served.
 */
export const DEFAULT_CHANNEL_IDLE_MS = 30_000;

/** @default 300_000 ms: streams end with `max_age` after this long (0: never) */
export const DEFAULT_MAX_STREAM_AGE_MS = 300_000;
/** @default 30_000 ms of random extra age per stream */
export const DEFAULT_MAX_STREAM_AGE_JITTER_MS = 30_000;

import type { DeliveryTracer } from './delivery-tracer';

export interface EventBusOptions {
  /** Events retained per order for resume. @default 256 */
  ringSize?: number;
  /** Oldest event age retained for resume, in ms. @default 300_000 */
  ringMaxAgeMs?: number;
  /** Events queued per subscriber waiting for its transport. @default 64 */
  queueCapacity?: number;
  /** @default 'conflate' */
  overflowPolicy?: OverflowPolicy;
  /** Maximum stream age in ms (0: unlimited). @default 300_000 */
  maxStreamAgeMs?: number;
  /** Random extra age per stream, 0..this, in ms. @default 30_000 */
  maxStreamAgeJitterMs?: number;
  /** How long a channel without local subscribers is kept, in ms. @default 30_000 */
  channelIdleMs?: number;
  /** Traces each live event's fan-out (OpenTelemetry). @default none: no tracing work */
  deliveryTracer?: DeliveryTracer;
}

export interface ResolvedEventBusOptions {
  readonly ringSize: number;
  readonly ringMaxAgeMs: number;
  readonly queueCapacity: number;
  readonly overflowPolicy: OverflowPolicy;
  readonly maxStreamAgeMs: number;
  readonly maxStreamAgeJitterMs: number;
  readonly channelIdleMs: number;
}

export function resolveEventBusOptions(opts: EventBusOptions = {}): ResolvedEventBusOptions {
  const resolved = {
    ringSize: opts.ringSize ?? DEFAULT_RING_SIZE,
    ringMaxAgeMs: opts.ringMaxAgeMs ?? DEFAULT_RING_MAX_AGE_MS,
    queueCapacity: opts.queueCapacity ?? DEFAULT_QUEUE_CAPACITY,
    overflowPolicy: opts.overflowPolicy ?? DEFAULT_OVERFLOW_POLICY,
    maxStreamAgeMs: opts.maxStreamAgeMs ?? DEFAULT_MAX_STREAM_AGE_MS,
    maxStreamAgeJitterMs: opts.maxStreamAgeJitterMs ?? DEFAULT_MAX_STREAM_AGE_JITTER_MS,
    channelIdleMs: opts.channelIdleMs ?? DEFAULT_CHANNEL_IDLE_MS,
  };
  // Programmer errors: config validation has already rejected bad environment values.
  if (!Number.isInteger(resolved.ringSize) || resolved.ringSize < 1) {
    throw new TypeError('ringSize must be an integer >= 1');
  }
  if (!Number.isInteger(resolved.queueCapacity) || resolved.queueCapacity < 1) {
    throw new TypeError('queueCapacity must be an integer >= 1');
  }
  if (!(resolved.ringMaxAgeMs > 0)) throw new TypeError('ringMaxAgeMs must be > 0');
  if (!(resolved.maxStreamAgeMs >= 0) || !(resolved.maxStreamAgeJitterMs >= 0)) {
    throw new TypeError('maxStreamAgeMs and maxStreamAgeJitterMs must be >= 0');
  }
  if (!(resolved.channelIdleMs >= 0)) throw new TypeError('channelIdleMs must be >= 0');
  if (!OVERFLOW_POLICIES.includes(resolved.overflowPolicy)) {
    throw new TypeError(`overflowPolicy must be one of ${OVERFLOW_POLICIES.join(', ')}`);
  }
  return resolved;
}
