import { constants as h2 } from 'node:http2';
import { status as GrpcCode } from '@grpc/grpc-js';
import { StreamEndTrailer } from '@app/contracts/grpc-trailers';
import { dispatchSubscribeResponse } from '../grpc-connector';
import type { StreamHandlers } from '../transport';
import { leanSubscribeResponse, type SubscribeResponseMsg } from './lean-proto';

/** Response headers or trailers, names lower-case, as Node's HTTP/2 and the HPACK decoder give them. */
export type GrpcHeaders = Readonly<Record<string, string | string[] | number | undefined>>;

/**
 * What one Subscribe call reports to its handlers, read the way grpc-js reads it, for the
 * clients that speak gRPC below grpc-js (the lean `node:http2` one and the raw one): when
 * the call counts as open, its status from headers or trailers, what a reset stream or a
 * lost connection means. Each client feeds it what arrives; it calls the handlers at most
 * once to end the call, and `onFinish` once when the call has ended for any reason but
 * the client's own close (`failed`: by an error found on the client's side or reported,
 * rather than by a status, so the client still has a stream to cancel).
 */
export class GrpcCallReport {
  private done = false;
  private opened = false;

  constructor(
    private readonly handlers: StreamHandlers,
    /** The full protobuf decoder, for the arms the lean reader leaves to it. */
    private readonly full: (b: Buffer) => SubscribeResponseMsg,
    private readonly onFinish: (failed: boolean) => void,
  ) {}

  get finished(): boolean {
    return this.done;
  }

  /** One gRPC message's bytes. */
  message(msg: Buffer): void {
    if (this.done) return;
    this.open();
    let m: SubscribeResponseMsg;
    try {
      m = leanSubscribeResponse(msg, this.full);
    } catch {
      // A message that does not decode ends the call, as grpc-js ends it.
      this.fail(GrpcCode.INTERNAL);
      return;
    }
    dispatchSubscribeResponse(m, this.handlers);
  }

  /** The response's headers: open (grpc-js emits its metadata), or a trailers-only status. */
  responseHeaders(h: GrpcHeaders): void {
    // Headers without a status open the call whatever the HTTP status; a trailers-only
    // answer (an error before any message) does not.
    if (h['grpc-status'] === undefined) this.open();
    const status = Number(h[':status']);
    if (status !== 200) this.fail(codeOfHttpStatus(status));
    else this.status(h);
  }

  /** The call's status, in the trailers (or a trailers-only response's headers). */
  status(h: GrpcHeaders): void {
    const code = h['grpc-status'];
    if (code === undefined) return;
    this.finish(false, () => {
      const n = Number(code) as GrpcCode;
      if (n === GrpcCode.OK) return this.handlers.onEnd('completed');
      const reason = h[StreamEndTrailer.Reason];
      // A server-ended stream (max age, shutdown) is UNAVAILABLE naming its reason.
      if (n === GrpcCode.UNAVAILABLE && typeof reason === 'string') this.handlers.onEnd(reason);
      else this.handlers.onError(`grpc_${GrpcCode[n] ?? String(code)}`);
    });
  }

  /** The stream was reset (RST_STREAM's code) before any status. */
  reset(rstCode: number): void {
    this.fail(codeOfReset(rstCode));
  }

  /** The connection failed or dropped before the call's status: UNAVAILABLE, as grpc-js says. */
  lost(): void {
    this.fail(GrpcCode.UNAVAILABLE);
  }

  fail(code: GrpcCode): void {
    this.finish(true, () => this.handlers.onError(`grpc_${GrpcCode[code]}`));
  }

  /** The client closed the call: nothing more is reported. */
  close(): void {
    this.done = true;
  }

  private open(): void {
    if (this.opened) return;
    this.opened = true;
    this.handlers.onOpen();
  }

  private finish(failed: boolean, report: () => void): void {
    if (this.done) return;
    this.done = true;
    this.onFinish(failed);
    report();
  }
}

/** Errors of a stream whose connection failed or dropped: UNAVAILABLE, as grpc-js says. */
export const CONNECTION_LOST = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE']);

/** The status of a call answered with a non-200 HTTP status (grpc-js's mapping). */
function codeOfHttpStatus(status: number): GrpcCode {
  switch (status) {
    case 400:
      return GrpcCode.INTERNAL;
    case 401:
      return GrpcCode.UNAUTHENTICATED;
    case 403:
      return GrpcCode.PERMISSION_DENIED;
    case 404:
      return GrpcCode.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GrpcCode.UNAVAILABLE;
    default:
      return GrpcCode.UNKNOWN;
  }
}

/** The status of a call whose stream was reset before any status (grpc-js's mapping). */
export function codeOfReset(rstCode: number): GrpcCode {
  switch (rstCode) {
    case h2.NGHTTP2_REFUSED_STREAM:
      return GrpcCode.UNAVAILABLE;
    case h2.NGHTTP2_CANCEL:
      return GrpcCode.CANCELLED;
    case h2.NGHTTP2_ENHANCE_YOUR_CALM:
      return GrpcCode.RESOURCE_EXHAUSTED;
    case h2.NGHTTP2_INADEQUATE_SECURITY:
      return GrpcCode.PERMISSION_DENIED;
    default:
      return GrpcCode.INTERNAL;
  }
}
