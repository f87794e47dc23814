import { constants as h2constants } from 'node:http2';
import { GRPC_CALL_CANCELLED } from '@app/contracts';
import type { ConnectionPort } from '../../connections/stream-lifecycle';
import type { SubscribeCall } from './grpc-messages';

/** The parts of the call's HTTP/2 stream used here. */
interface ClosableStream {
  readonly destroyed: boolean;
  readonly closed: boolean;
  close(code: number): void;
  once(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

/**
 * The connection port of a gRPC server-streaming call.
 *
 * Gone: grpc-js emits GRPC_CALL_CANCELLED when the client cancels, the deadline passes, the
 * connection drops, and also once the status has been handed to HTTP/2 after the last
 * message was taken (it then flushes the incoming side): every way a call can be over.
 * Except one: a RST_STREAM that arrives with the request's last frames closes the HTTP/2
 * stream before grpc-js has built the call object, which then never hears of it (a
 * cancel flood leaked one slot per such call). So the HTTP/2 stream itself is watched
 * too, and its state checked first.
 *
 * Destroy: grpc-js has no public way for a server to reset one call, and a client that
 * stopped reading leaves the status queued behind unsent messages until max connection
 * age. The call's HTTP/2 stream is reached through grpc-js's call objects (the `call`
 * and `nextCall` chain down to the stream); a test pins this to the installed grpc-js.
 * If the shape ever changes, the call lingers until max connection age as before.
 */
export function grpcCallPort(call: SubscribeCall): ConnectionPort {
  return new GrpcCallPort(call);
}

/** A class, not closures: a Subscribe call keeps its port for its whole life. */
class GrpcCallPort implements ConnectionPort {
  constructor(private readonly call: SubscribeCall) {}

  watchGone(onGone: () => void): void {
    const stream = http2StreamOf(this.call);
    if (this.call.cancelled || stream?.destroyed === true || stream?.closed === true) {
      onGone();
      return;
    }
    this.call.once(GRPC_CALL_CANCELLED, onGone);
    stream?.once('close', onGone);
  }

  unwatchGone(onGone: () => void): void {
    this.call.off(GRPC_CALL_CANCELLED, onGone);
    http2StreamOf(this.call)?.off('close', onGone);
  }

  destroy(): void {
    const stream = http2StreamOf(this.call);
    if (stream !== undefined && !stream.destroyed) stream.close(h2constants.NGHTTP2_CANCEL);
  }
}

/** The HTTP/2 stream under a grpc-js server call, when grpc-js's internals have the known shape. */
export function http2StreamOf(call: object): ClosableStream | undefined {
  let node: unknown = (call as { call?: unknown }).call;
  for (let depth = 0; depth < 8 && typeof node === 'object' && node !== null; depth++) {
    const { stream, nextCall } = node as { stream?: unknown; nextCall?: unknown };
    if (isClosableStream(stream)) return stream;
    node = nextCall;
  }
  return undefined;
}

function isClosableStream(value: unknown): value is ClosableStream {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { close?: unknown }).close === 'function' &&
    typeof (value as { once?: unknown }).once === 'function' &&
    'rstCode' in value
  );
}
