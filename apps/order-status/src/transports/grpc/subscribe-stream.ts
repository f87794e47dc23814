import { Observable } from 'rxjs';
import type { Principal } from '@app/auth';
import { cursorAfter, StreamEndReason, type StreamItem } from '@app/contracts';
import type { StreamConnections } from '../../connections/stream-connections.service';
import { grpcCallPort } from './grpc-connection-port';
import type { SubscribeCall } from './grpc-messages';
import { streamEndError } from './grpc-status';
import { SUBSCRIBE_ENCODING } from './subscribe-encoding';

/** The bus and metrics label of this transport. */
export const GRPC_TRANSPORT = 'grpc';

/**
 * One Subscribe call as an Observable that never emits: the bus writes straight to the
 * call (a DeliverySink on `call.write()`), and the Observable only says when the call is
 * over. It completes when the order is finished (Nest then ends the call: status OK) and
 * errors with the typed error when the stream could not open, or with UNAVAILABLE /
 * UNAUTHENTICATED for every other end reason.
 *
 * Why not emit the items and let Nest write them: Nest's `writeObservableToGrpc` keeps
 * an unbounded array of values while `call.write()` returns false, so a client that
 * stops reading would grow server memory without limit. Here the bus stops pumping when
 * `call.write()` returns false and resumes on 'drain' (Node stream back-pressure), so
 * what waits for a slow client is the bus's bounded queue, under its overflow policy.
 *
 * The connection (slot, gauge, bus subscription) follows the one life cycle
 * (connections/stream-lifecycle.ts), not this Observable: after the end, the status
 * waits behind messages a stalled client has not read (HTTP/2 sends trailers after the
 * stream's data), and the lifecycle resets the call's stream when the grace period passes.
 *
 * `connectionsByTransport.grpc` counts open Subscribe streams, the gRPC counterpart of
 * an open SSE response (grpc-js does not expose its HTTP/2 sessions).
 */
export function subscribeStream(
  connections: StreamConnections,
  call: SubscribeCall,
  principal: Principal,
  orderId: string,
  afterSeq: number,
): Observable<never> {
  return new Observable<never>((nest) => {
    let lastSeq = afterSeq;
    let pendingDrain: (() => void) | undefined;
    connections
      .busStream({
        transport: GRPC_TRANSPORT,
        principal,
        orderId,
        afterSeq,
        port: grpcCallPort(call),
        sink: (ctx) => ({
          write: (item: StreamItem) => {
            if (ctx.closed) return false;
            lastSeq = cursorAfter(item);
            return call.write(SUBSCRIBE_ENCODING.message(item));
          },
          onDrain: (resume) => {
            pendingDrain = () => {
              pendingDrain = undefined;
              resume();
            };
            call.once('drain', pendingDrain);
          },
          end: (reason, retryAfterMs) => {
            if (reason === StreamEndReason.Completed) nest.complete();
            else nest.error(streamEndError(reason, lastSeq, retryAfterMs));
            ctx.ended();
          },
        }),
      })
      .subscribe({ error: (err: unknown) => nest.error(err) });
    return () => {
      if (pendingDrain) call.off('drain', pendingDrain);
    };
  });
}
