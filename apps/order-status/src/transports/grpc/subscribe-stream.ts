import { Observable, type Subscriber } from 'rxjs';
import type { Principal } from '@app/auth';
import {
  checkExpectedDomain,
  GRPC_CALL_CANCELLED,
  parseOrderId,
  parseSeq,
  cursorAfter,
  StreamEndReason,
  type StreamDomain,
  type StreamItemOf,
} from '@app/contracts';
import type { DeliverySink } from '@app/event-bus';
import type { StreamConnections } from '../../connections/stream-connections.service';
import type { StreamContext } from '../../connections/stream-lifecycle';
import {
  principalOf,
  type ConnectionHandle,
  type ConnectionObserver,
} from '../../connections/connection-observer';
import { grpcCallPort } from './grpc-connection-port';
import type { SubscribeCall, SubscribeRequest } from './grpc-messages';
import { streamEndError } from './grpc-status';
import { SUBSCRIBE_ENCODING } from './subscribe-encoding';

/** The bus and metrics label of this transport. */
export const GRPC_TRANSPORT = 'grpc';

/** What one Subscribe call needs from the service. */
export interface SubscribeDeps {
  readonly connections: StreamConnections;
  /** The domain whose events the bus carries (their proto arms and messages). */
  readonly domain: StreamDomain;
  readonly log: ConnectionObserver;
  /** Verifies the call's credentials (its `authorization` metadata). */
  authenticate(): Promise<Principal>;
  /** The domain the client decodes (its `stream-domain` metadata), undefined when it names none. */
  readonly expectedDomain?: unknown;
}

/**
 * One Subscribe call as an Observable that never emits: the bus writes straight to the
 * call (a DeliverySink on `call.write()`), and the Observable only says when the call is
 * over. It completes when the order is finished (Nest then ends the call: status OK) and
 * errors with the typed error when the stream could not open (authentication, a bad
 * request, authorization), or with UNAVAILABLE / UNAUTHENTICATED for every other end
 * reason.
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
 * The call's opened and closed log lines are written here too, rather than by a Nest
 * interceptor: an interceptor makes Nest run the handler inside an RxJS pipeline (defer,
 * mergeAll, tap, finalize) that an open call keeps for its whole life.
 *
 * `connectionsByTransport.grpc` counts open Subscribe streams, the gRPC counterpart of
 * an open SSE response (grpc-js does not expose its HTTP/2 sessions).
 */
export function subscribeStream(
  deps: SubscribeDeps,
  req: SubscribeRequest,
  call: SubscribeCall,
): Observable<never> {
  return new Observable<never>((nest) => {
    const sink = new SubscribeSink(
      call,
      nest,
      deps.domain,
      deps.log.opened(GRPC_TRANSPORT, principalOf(call), { orderId: req.orderId }),
    );
    deps
      .authenticate()
      .then((principal) => {
        if (nest.closed) return;
        // Named in the closing log line.
        call.principal = principal;
        const orderId = parseOrderId(req.orderId);
        const afterSeq = parseSeq(req.afterSeq, 'after_seq');
        checkExpectedDomain(deps.domain.name, deps.expectedDomain);
        sink.lastSeq = afterSeq;
        deps.connections
          .busStream({
            transport: GRPC_TRANSPORT,
            principal,
            orderId,
            afterSeq,
            port: grpcCallPort(call),
            sink: (ctx) => sink.attach(ctx),
          })
          .subscribe({ error: (err: unknown) => sink.fail(err) });
      })
      .catch((err: unknown) => sink.fail(err));
    return () => sink.release();
  });
}

/**
 * The bus's sink on one call, and the call's ends: completion (OK), a typed error, the
 * client's cancellation, each logged once. A class rather than closures: an open call
 * keeps it for its whole life.
 */
class SubscribeSink implements DeliverySink {
  /** The cursor after the last item written: where the client resumes. */
  lastSeq = 0;
  private ctx: StreamContext | undefined;
  private pendingDrain: (() => void) | undefined;

  constructor(
    private readonly call: SubscribeCall,
    private readonly nest: Subscriber<never>,
    private readonly domain: StreamDomain,
    private readonly conn: ConnectionHandle,
  ) {}

  attach(ctx: StreamContext): DeliverySink {
    this.ctx = ctx;
    return this;
  }

  write(item: StreamItemOf): boolean {
    if (this.ctx?.closed !== false) return false;
    this.lastSeq = cursorAfter(item);
    return this.call.write(SUBSCRIBE_ENCODING.message(this.domain, item));
  }

  onDrain(resume: () => void): void {
    this.pendingDrain = () => {
      this.pendingDrain = undefined;
      resume();
    };
    this.call.once('drain', this.pendingDrain);
  }

  end(reason: StreamEndReason, retryAfterMs?: number): void {
    if (reason === StreamEndReason.Completed) {
      this.logClosed('completed');
      this.nest.complete();
    } else {
      this.fail(streamEndError(reason, this.lastSeq, retryAfterMs));
    }
    this.ctx?.ended();
  }

  /** The call ends with `err` (the stream could not open, or the bus ended it). */
  fail(err: unknown): void {
    if (this.nest.closed) return;
    this.logClosed(err instanceof Error ? err.message : 'error');
    this.nest.error(err);
  }

  /**
   * The Observable is done: completed, errored, or unsubscribed by Nest, which it does
   * when the call is cancelled (client gone, deadline, connection lost).
   */
  release(): void {
    if (this.pendingDrain) this.call.off('drain', this.pendingDrain);
    this.pendingDrain = undefined;
    this.logClosed(this.call.cancelled ? GRPC_CALL_CANCELLED : undefined);
  }

  private logClosed(reason: string | undefined): void {
    this.conn.closed(reason, principalOf(this.call));
  }
}
