/**
 * What the load test needs from the service's JSON wire format. Parsed defensively:
 * the service is the system under test, so a malformed frame is counted as an error,
 * not trusted.
 */
/**
 * The events' wire names (SSE `event:`, socket.io event, raw WebSocket `type`) of both
 * domains the service carries: the order's status changes and tracking updates, and the
 * payload domain's payloads (STREAM_DOMAIN=payload).
 */
export const EVENT_NAMES = ['status', 'tracking', 'payload'] as const;

export interface WireEvent {
  readonly orderId: string;
  readonly seq: number;
  readonly publishedAtUs: number;
}

export interface WireReset {
  readonly reason: string;
  readonly lastSeq: number;
}

/** Seqs `fromSeq..toSeq` the service dropped for this subscriber and said so. */
export interface WireSkipped {
  readonly fromSeq: number;
  readonly toSeq: number;
}

/** A poll answer; `reset` or `skipped`, when present, comes before `events`. */
export interface LongPollBody {
  readonly events: readonly WireEvent[];
  readonly reset: WireReset | undefined;
  readonly skipped: WireSkipped | undefined;
  readonly next: number;
  readonly completed: boolean;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

export function toWireEvent(v: unknown): WireEvent {
  if (
    !isRecord(v) ||
    typeof v.orderId !== 'string' ||
    typeof v.seq !== 'number' ||
    typeof v.publishedAtUs !== 'number'
  ) {
    throw new TypeError('malformed event');
  }
  return { orderId: v.orderId, seq: v.seq, publishedAtUs: v.publishedAtUs };
}

export function toWireReset(v: unknown): WireReset {
  if (!isRecord(v) || !isRecord(v.snapshot) || typeof v.snapshot.lastSeq !== 'number') {
    throw new TypeError('malformed reset');
  }
  return {
    reason: typeof v.reason === 'string' ? v.reason : 'unknown',
    lastSeq: v.snapshot.lastSeq,
  };
}

export function toWireSkipped(v: unknown): WireSkipped {
  if (
    !isRecord(v) ||
    typeof v.fromSeq !== 'number' ||
    typeof v.toSeq !== 'number' ||
    v.toSeq < v.fromSeq
  ) {
    throw new TypeError('malformed skipped');
  }
  return { fromSeq: v.fromSeq, toSeq: v.toSeq };
}

/** Parses a 200 body of `GET /v1/orders/:id/events`. */
export function parseLongPollBody(text: string): LongPollBody {
  const v: unknown = JSON.parse(text);
  if (!isRecord(v) || !Array.isArray(v.events) || typeof v.next !== 'number') {
    throw new TypeError('malformed long-poll body');
  }
  return {
    events: v.events.map(toWireEvent),
    reset: v.reset === undefined || v.reset === null ? undefined : toWireReset(v.reset),
    skipped: v.skipped === undefined || v.skipped === null ? undefined : toWireSkipped(v.skipped),
    next: v.next,
    completed: v.completed === true,
  };
}
