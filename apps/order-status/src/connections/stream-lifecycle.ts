import { Observable } from 'rxjs';

/** @default 5_000 ms a connection whose stream has ended gets to take its last bytes */
export const DEFAULT_STREAM_END_GRACE_MS = 5_000;

/** The per-transport connection gauge the lifecycle keeps (the bus's stats implement it). */
export interface ConnectionGauge {
  connectionOpened(transport: string): void;
  connectionClosed(transport: string): void;
}

/**
 * What a transport tells the lifecycle about its connection: when the client is gone, and
 * how to tear the connection down.
 */
export interface ConnectionPort {
  /**
   * Calls `onGone` once the connection is over: the client left (socket closed, HTTP/2
   * RST_STREAM, gRPC cancel) or the response was fully taken and closed. Must call it
   * synchronously when that has already happened: an HTTP/2 stream can be cancelled while
   * the (async) guard still runs, and its 'close' event is then long gone. Returns a
   * function that removes the listeners.
   */
  watchGone(onGone: () => void): () => void;
  /** Tears the connection down: a client that stopped reading after its stream ended. */
  destroy(): void;
}

/** What the lifecycle hands the transport's `open` step. */
export interface StreamContext {
  /**
   * The transport has written the stream's last bytes (end frame, final answer, status):
   * the client now has the grace period to take them before the connection is destroyed.
   * Idempotent.
   */
  ended(): void;
  /** The connection is over (client gone, or released): write nothing more. */
  readonly closed: boolean;
}

/** What `open` returns: the thing to release when the connection is over. */
export interface StreamHandle {
  /** Idempotent. */
  close(): void;
}

/** The steps of one connection, in order; each transport supplies its own. */
export interface StreamPlan<H extends StreamHandle> {
  /** Metrics label and gauge key. */
  readonly transport: string;
  readonly port: ConnectionPort;
  /** Per-order authorization (NotFound, PermissionDenied); runs before anything is taken. */
  authorize(): Promise<unknown>;
  /**
   * Takes a connection slot (ResourceExhausted); returns its release. May be async (a
   * slot counted in a shared store).
   */
  acquireSlot(): (() => void) | Promise<() => void>;
  /** Opens the stream (usually a bus subscription writing to the transport). */
  open(ctx: StreamContext): Promise<H>;
}

export interface LifecycleOptions {
  readonly gauge: ConnectionGauge;
  /** @default DEFAULT_STREAM_END_GRACE_MS */
  readonly endGraceMs?: number;
}

/**
 * One connection's life cycle, the same for every transport: count it, authorize,
 * take a slot, open the stream; then release everything exactly once, whatever comes
 * first: the client leaving (before, during or after the open), the stream's end, a
 * write error, shutdown.
 *
 * An Observable because its teardown is exactly that release: RxJS runs it once,
 * whichever of complete, error or unsubscribe happens first, including when the client
 * is already gone while the Observable is still being subscribed. It emits the handle
 * once the stream is open, errors (with the typed error) only when it could not open,
 * and completes when the connection is over.
 *
 * A stream that has ended (`ctx.ended()`) still holds its slot until the client has
 * taken the last bytes and the connection closed, at most `endGraceMs`: a client that
 * stopped reading would otherwise keep the socket, and the memory of what the server
 * wrote into it, for as long as TCP keeps an unread connection (for ever, with
 * keepalive answered by the kernel). After the grace period the connection is destroyed.
 */
export function streamLifecycle<H extends StreamHandle>(
  plan: StreamPlan<H>,
  opts: LifecycleOptions,
): Observable<H> {
  const graceMs = opts.endGraceMs ?? DEFAULT_STREAM_END_GRACE_MS;
  return new Observable<H>((subscriber) => {
    // What the connection holds, given back by the one teardown below. Plain variables
    // rather than a Subscription per resource: a held long-poll or an idle stream keeps
    // all of this for its whole life, so every closure counts (load test, idle scenario).
    let releaseSlot: (() => void) | undefined;
    let handle: H | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    opts.gauge.connectionOpened(plan.transport);
    const unwatch = plan.port.watchGone(() => subscriber.complete());
    const teardown = () => {
      clearTimeout(graceTimer);
      unwatch();
      handle?.close();
      releaseSlot?.();
      opts.gauge.connectionClosed(plan.transport);
    };
    if (subscriber.closed) return teardown;

    const ctx: StreamContext = {
      ended: () => {
        if (subscriber.closed || graceTimer !== undefined) return;
        graceTimer = setTimeout(() => {
          plan.port.destroy();
          subscriber.complete();
        }, graceMs);
        graceTimer.unref();
      },
      get closed() {
        return subscriber.closed;
      },
    };

    const run = async () => {
      await plan.authorize();
      if (subscriber.closed) return;
      const release = await plan.acquireSlot();
      // The client may have left while a shared store counted the slot.
      if (subscriber.closed) {
        release();
        return;
      }
      releaseSlot = release;
      const opened = await plan.open(ctx);
      // The client may have left while the stream was opening (the replay is read
      // asynchronously): the handle is released at once.
      if (subscriber.closed) {
        opened.close();
        return;
      }
      handle = opened;
      subscriber.next(opened);
    };
    // After the connection is over an error has nobody to tell (RxJS drops it).
    run().catch((err: unknown) => subscriber.error(err));
    return teardown;
  });
}

/**
 * Subscribes to a lifecycle and resolves once its stream is open (with the handle), or
 * with undefined when the client left first; rejects with the error that kept it from
 * opening, so a handler can answer it as usual. The connection lives on after the
 * promise settles, until it is over.
 */
export function startStream<H extends StreamHandle>(
  lifecycle$: Observable<H>,
): Promise<H | undefined> {
  return new Promise((resolve, reject) => {
    lifecycle$.subscribe({ next: resolve, error: reject, complete: () => resolve(undefined) });
  });
}
