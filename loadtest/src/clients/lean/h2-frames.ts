import { PrefixedSplitter } from './prefixed-splitter';

/**
 * HTTP/2 frames (RFC 9113 §4, §6) as the raw gRPC reader writes and reads them: the
 * frame header, the few frames a client sends, and a splitter for what arrives.
 */

/** The client's connection preface (RFC 9113 §3.4). */
export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const FrameType = {
  Data: 0x0,
  Headers: 0x1,
  Priority: 0x2,
  RstStream: 0x3,
  Settings: 0x4,
  PushPromise: 0x5,
  Ping: 0x6,
  Goaway: 0x7,
  WindowUpdate: 0x8,
  Continuation: 0x9,
} as const;

export const Flag = {
  EndStream: 0x1,
  Ack: 0x1,
  EndHeaders: 0x4,
  Padded: 0x8,
  Priority: 0x20,
} as const;

export const Setting = {
  EnablePush: 0x2,
  InitialWindowSize: 0x4,
} as const;

/** RST_STREAM / GOAWAY error codes the reader sends or reads (RFC 9113 §7). */
export const ErrorCodeH2 = {
  NoError: 0x0,
  Cancel: 0x8,
} as const;

const HEADER_BYTES = 9;
/** SETTINGS_MAX_FRAME_SIZE's initial value; the reader never raises it. */
export const MAX_FRAME_SIZE = 16_384;
/** The largest flow-control window (2^31 - 1) and the window every stream starts with. */
export const MAX_WINDOW = 0x7fffffff;
export const DEFAULT_WINDOW = 65_535;

export function frame(type: number, flags: number, streamId: number, payload?: Buffer): Buffer {
  const len = payload?.length ?? 0;
  const out = Buffer.allocUnsafe(HEADER_BYTES + len);
  out.writeUIntBE(len, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(streamId & MAX_WINDOW, 5);
  payload?.copy(out, HEADER_BYTES);
  return out;
}

export function settingsFrame(settings: ReadonlyArray<readonly [number, number]>): Buffer {
  const payload = Buffer.allocUnsafe(6 * settings.length);
  settings.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, 6 * i);
    payload.writeUInt32BE(value, 6 * i + 2);
  });
  return frame(FrameType.Settings, 0, 0, payload);
}

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(increment & MAX_WINDOW, 0);
  return frame(FrameType.WindowUpdate, 0, streamId, payload);
}

export function rstStreamFrame(streamId: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(code, 0);
  return frame(FrameType.RstStream, 0, streamId, payload);
}

export function goawayFrame(lastStreamId: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(8);
  payload.writeUInt32BE(lastStreamId & MAX_WINDOW, 0);
  payload.writeUInt32BE(code, 4);
  return frame(FrameType.Goaway, 0, 0, payload);
}

/** One frame read off the wire; `payload` is a view of the read buffer, valid until the next push. */
export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

/**
 * Splits the bytes of a connection into frames, whatever their chunking. push() returns
 * false on a frame larger than the reader allows (a connection error, RFC 9113 §4.2).
 */
export class FrameSplitter {
  private readonly splitter: PrefixedSplitter;

  constructor(onFrame: (f: Frame) => void) {
    this.splitter = new PrefixedSplitter(
      HEADER_BYTES,
      (buf, at) => {
        const len = buf.readUIntBE(at, 3);
        return len > MAX_FRAME_SIZE ? -1 : len;
      },
      (buf, at, end) =>
        onFrame({
          type: buf[at + 3],
          flags: buf[at + 4],
          streamId: buf.readUInt32BE(at + 5) & MAX_WINDOW,
          payload: buf.subarray(at + HEADER_BYTES, end),
        }),
    );
  }

  push(chunk: Buffer): boolean {
    return this.splitter.push(chunk);
  }
}

/**
 * A DATA or HEADERS frame's content without its padding (and a HEADERS frame's priority
 * fields), or undefined when the padding is longer than the frame (a protocol error).
 */
export function unpadded(f: Frame): Buffer | undefined {
  let body = f.payload;
  let pad = 0;
  if (f.flags & Flag.Padded) {
    if (body.length < 1) return undefined;
    pad = body[0];
    body = body.subarray(1);
  }
  if (f.type === FrameType.Headers && f.flags & Flag.Priority) {
    if (body.length < 5) return undefined;
    body = body.subarray(5);
  }
  if (pad > body.length) return undefined;
  return body.subarray(0, body.length - pad);
}
