import { Observable } from 'rxjs';
import { StreamEndReason, streamItemToProto, type StreamItem } from '@app/contracts';
import type { BusSubscription, DeliverySink, OrderEventBus } from '@app/event-bus';
import type { SubscribeCall } from './grpc-messages';
import { streamEndError } from './grpc-status';

/** The bus and metrics label of this transport. */
export const GRPC_TRANSPORT = 'grpc';

/**
 * One Subscribe call as an Observable that never emits: the bus writes straight to the
 * call (a DeliverySink on `call.write()`), and the Observable only says when the call is
 * over. It completes when the order is finished (Nest then ends the call: status OK) and
 * errors with UNAVAILABLE for every other end reason; its teardown releases the bus
 * subscription.
 *
 * Why not emit the items and let Nest write them: Nest's `writeObservableToGrpc` keeps
 * an unbounded array of values while `call.write()` returns false, so a client that
 * stops reading would grow server memory without limit. Here the bus stops pumping when
 * `call.write()` returns false and resumes on 'drain' (Node stream back-pressure), so
 * what waits for a slow client is the bus's bounded queue, under its overflow policy.
 *
 * Since nothing is emitted, Nest never writes to the call; it only ends it, after every
 * message written here (grpc-js sends the status from the Writable's `_final`, i.e.
 * after the buffered writes). For a client that has stopped reading, that status waits
 * behind the buffered messages (HTTP/2 sends trailers after the stream's data); the bus
 * subscription is released at once all the same, and keepalive and the maximum
 * connection age bound how long such a call can linger.
 *
 * `connectionsByTransport.grpc` counts open Subscribe streams, the gRPC counterpart of
 * an open SSE response (grpc-js does not expose its HTTP/2 sessions).
 */
export interface SubscribeStreamOptions {
  /** The caller's credentials expire then: the stream ends with UNAUTHENTICATED. */
  readonly expiresAtMs?: number;
  /** Takes a per-principal connection slot (may throw ResourceExhausted); returns its release. */
  readonly acquireSlot?: () => () => void;
}

export function subscribeStream(
  bus: OrderEventBus,
  call: SubscribeCall,
  orderId: string,
  afterSeq: number,
  opts: SubscribeStreamOptions = {},
): Observable<never> {
  return new Observable<never>((subscriber) => {
    let sub: BusSubscription | undefined;
    let releaseSlot: (() => void) | undefined;
    let released = false;
    let lastSeq = afterSeq;
    let pendingDrain: (() => void) | undefined;

    const release = () => {
      if (released) return;
      released = true;
      sub?.close();
      releaseSlot?.();
      call.off('cancelled', release);
      if (pendingDrain) call.off('drain', pendingDrain);
      bus.stats.connectionClosed(GRPC_TRANSPORT);
    };
    // grpc-js emits 'cancelled' when the client cancels, when the deadline passes (it
    // has already sent DEADLINE_EXCEEDED itself) and when the connection goes away:
    // the bus subscription is released at once in every case.
    call.once('cancelled', release);
    bus.stats.connectionOpened(GRPC_TRANSPORT);
    // Authentication ran asynchronously before this: the client may already be gone.
    if (call.cancelled) {
      release();
      return release;
    }
    try {
      releaseSlot = opts.acquireSlot?.();
    } catch (err) {
      subscriber.error(err);
      return release;
    }

    const sink: DeliverySink = {
      write: (item: StreamItem) => {
        lastSeq = item.kind === 'event' ? item.event.seq : item.reset.snapshot.lastSeq;
        return call.write(streamItemToProto(item));
      },
      onDrain: (resume) => {
        pendingDrain = () => {
          pendingDrain = undefined;
          resume();
        };
        call.once('drain', pendingDrain);
      },
      end: (reason, retryAfterMs) => {
        if (reason === StreamEndReason.Completed) subscriber.complete();
        else subscriber.error(streamEndError(reason, lastSeq, retryAfterMs));
      },
    };

    const openOptions = {
      transport: GRPC_TRANSPORT,
      ...(opts.expiresAtMs !== undefined ? { expiresAtMs: opts.expiresAtMs } : {}),
    };
    bus.open(orderId, afterSeq, sink, openOptions).then(
      (opened) => {
        // The client may have gone while the bus read the snapshot and the replay.
        if (released) opened.close();
        else sub = opened;
      },
      (err: unknown) => {
        if (!released) subscriber.error(err);
      },
    );
    return release;
  });
}
