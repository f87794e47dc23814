import type { WireEvent } from '../wire-types';

/**
 * A SubscribeResponse as the gRPC connector reads it: the event arm by the lean reader,
 * the rare arms (reset, skipped, anything newer) by the full protobuf decoder.
 */
export interface SubscribeResponseMsg {
  event?: WireEvent;
  /** A tracking update: the same seq sequence as status changes. */
  tracking?: WireEvent;
  /** The payload domain's event (STREAM_DOMAIN=payload). */
  payload?: WireEvent;
  /** A reset carries the order's snapshot, or in the payload domain the payload's. */
  reset?: {
    reason: number;
    snapshot?: { lastSeq: number };
    payloadSnapshot?: { lastSeq: number };
  };
  skipped?: { fromSeq: number; toSeq: number };
}

// Protobuf wire types (protobuf.dev/programming-guides/encoding).
const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

/**
 * Tag bytes of `SubscribeResponse.event` (field 1), `.tracking` (field 4) and `.payload`
 * (field 5), length-delimited.
 */
const EVENT_TAG = (1 << 3) | LEN;
const TRACKING_TAG = (4 << 3) | LEN;
const PAYLOAD_TAG = (5 << 3) | LEN;
// Fields of OrderStatusChanged, which TrackingUpdated and PayloadEvent share
// (proto/order_domain.proto, proto/payload_domain.proto).
const ORDER_ID = 1;
const SEQ = 2;
const PUBLISHED_AT_US = 4;

/** Cursor of the reader: one module-level position instead of a tuple per varint. */
let pos = 0;

/** A varint up to 2^53 (seq, epoch microseconds); multiplication, since bit ops are 32-bit. */
function varint(buf: Uint8Array, end: number): number {
  let n = 0;
  let scale = 1;
  for (let i = 0; i < 10; i += 1) {
    if (pos >= end) throw new TypeError('malformed protobuf: truncated varint');
    const b = buf[pos++];
    n += (b & 0x7f) * scale;
    if (b < 0x80) {
      if (n > Number.MAX_SAFE_INTEGER) throw new TypeError('malformed protobuf: varint > 2^53');
      return n;
    }
    scale *= 128;
  }
  throw new TypeError('malformed protobuf: varint too long');
}

function skip(buf: Uint8Array, wireType: number, end: number): void {
  switch (wireType) {
    case VARINT:
      varint(buf, end);
      return;
    case I64:
      pos += 8;
      break;
    case LEN: {
      // Not `pos += varint()`: the left-hand `pos` would be read before varint() moves it.
      const n = varint(buf, end);
      pos += n;
      break;
    }
    case I32:
      pos += 4;
      break;
    default:
      throw new TypeError(`malformed protobuf: wire type ${wireType}`);
  }
  if (pos > end) throw new TypeError('malformed protobuf: field past the end');
}

/**
 * Reads orderId, seq and publishedAtUs of a status change, tracking update or payload
 * (skipping status, location, the payload and any unknown field) without building the message object, which at thousands of events
 * a second was most of the generator's gRPC decoding cost.
 */
export function leanSubscribeResponse(
  buf: Buffer,
  full: (buf: Buffer) => SubscribeResponseMsg,
): SubscribeResponseMsg {
  const arm = buf.length === 0 ? 0 : buf[0];
  if (arm !== EVENT_TAG && arm !== TRACKING_TAG && arm !== PAYLOAD_TAG) return full(buf);
  pos = 1;
  const len = varint(buf, buf.length);
  const end = pos + len;
  if (end > buf.length) throw new TypeError('malformed protobuf: truncated message');
  if (end < buf.length) return full(buf); // another field follows: not the plain event arm
  let orderId = '';
  let seq = 0;
  let publishedAtUs = 0;
  while (pos < end) {
    const tag = varint(buf, end);
    const field = Math.floor(tag / 8);
    const wireType = tag & 7;
    if (field === SEQ && wireType === VARINT) seq = varint(buf, end);
    else if (field === PUBLISHED_AT_US && wireType === VARINT) publishedAtUs = varint(buf, end);
    else if (field === ORDER_ID && wireType === LEN) {
      const n = varint(buf, end);
      if (pos + n > end) throw new TypeError('malformed protobuf: field past the end');
      orderId = buf.toString('utf8', pos, pos + n);
      pos += n;
    } else skip(buf, wireType, end);
  }
  const event = { orderId, seq, publishedAtUs };
  return arm === EVENT_TAG
    ? { event }
    : arm === TRACKING_TAG
      ? { tracking: event }
      : { payload: event };
}
