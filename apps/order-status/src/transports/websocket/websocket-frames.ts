import {
  encodeOncePerDomain,
  errorBody,
  HTTP_STATUS_BY_CODE,
  itemWireName,
  payloadOf,
  StreamEndReason,
  type GatewayError,
  type StreamDomain,
  type StreamItemOf,
} from '@app/contracts';

/**
 * The raw WebSocket wire format: one JSON text frame per message, `{"type": name, "data":
 * body}`: `open` first, then items, which use the names and bodies every JSON transport uses (SSE's `event:` and
 * `data:`): `status`, `tracking`, `reset`, `skipped`; then `end` (`{reason,
 * retryAfterMs?}`) or `error` (`{code, message, retryAfterMs?}`) just before the close frame.
 * The body sits under `data` rather than beside `type` so that no event field can clash with
 * the frame's own.
 */
export function frameJson(type: string, data: unknown): string {
  return `{"type":${JSON.stringify(type)},"data":${JSON.stringify(data)}}`;
}

/** An item's frame: an event is named by its kind's wire name in `domain`, as on SSE. */
export function itemFrame(domain: StreamDomain, item: StreamItemOf): string {
  return frameJson(itemWireName(domain, item), payloadOf(item));
}

/**
 * Each event's frame as UTF-8 bytes, made once for every socket that carries the event
 * (one cache per domain): `ws.send()` of a Buffer frames it without a copy, a string is
 * encoded per socket.
 */
export const websocketFrames = encodeOncePerDomain<Buffer, StreamItemOf, StreamDomain>(
  (domain) => ({
    encode: (item) => Buffer.from(itemFrame(domain, item), 'utf8'),
    sizeOf: (frame) => frame.length,
  }),
);

/**
 * The stream is open (authenticated, authorized, subscribed): the first frame, before the
 * replay. A client that counts connection attempts counts this one as accepted, as an SSE
 * client does a 200 and a socket.io client its `subscribe` ack.
 */
export function openFrame(orderId: string, afterSeq: number): string {
  return frameJson('open', { orderId, afterSeq });
}

/** Why the stream ends, with the reconnect advice at shutdown (as SSE's `end`). */
export function endFrame(reason: StreamEndReason, retryAfterMs?: number): string {
  return frameJson('end', retryAfterMs === undefined ? { reason } : { reason, retryAfterMs });
}

/** Why the stream could not open (or was cut): the typed error, as on every transport. */
export function errorFrame(err: GatewayError): string {
  return frameJson('error', errorBody(err).error);
}

/**
 * Close codes (RFC 6455 section 7.4.1; 4000-4999 are the application's own). A refusal is
 * 4000 + the HTTP status of its error code (4400, 4401, 4403, 4404, 4429, 4503, ...), so
 * a browser, which never sees the upgrade's HTTP status, still learns it; the reason is the
 * error code.
 */
export const CLOSE_NORMAL = 1000;
export const CLOSE_GOING_AWAY = 1001;
export const CLOSE_POLICY_VIOLATION = 1008;
export const CLOSE_SERVICE_RESTART = 1012;
export const CLOSE_TRY_AGAIN_LATER = 1013;
/** The first of the application's close codes. */
const APPLICATION_CLOSE_BASE = 4000;

/** The close code of a stream's end; every reason but `completed` means "resume". */
export const CLOSE_CODE_BY_END: Readonly<Record<StreamEndReason, number>> = {
  [StreamEndReason.Completed]: CLOSE_NORMAL,
  [StreamEndReason.MaxAge]: CLOSE_GOING_AWAY,
  [StreamEndReason.Shutdown]: CLOSE_SERVICE_RESTART,
  [StreamEndReason.Overflow]: CLOSE_TRY_AGAIN_LATER,
  [StreamEndReason.TokenExpired]: APPLICATION_CLOSE_BASE + 401,
};

/** The close code of a refusal: 4000 + its HTTP status. */
export function closeCodeOf(err: GatewayError): number {
  return APPLICATION_CLOSE_BASE + HTTP_STATUS_BY_CODE[err.code];
}
