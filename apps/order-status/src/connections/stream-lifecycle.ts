import type { DeadlineEntry, DeadlineQueue } from '@app/event-bus';

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
   * the (async) guard still runs, and its 'close' event is then long gone.
   */
  watchGone(onGone: () => void): void;
  /** Removes what `watchGone(onGone)` added (a no-op when it called `onGone` at once). */
  unwatchGone(onGone: () => void): void;
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
  /**
   * Where the end grace period waits (the bus's queue: one timer for every deadline) rather
   * than on a timer per connection: a long-poll ends its stream on every answer.
   */
  readonly deadlines: Pick<DeadlineQueue, 'schedule' | 'cancel'>;
  /** @default DEFAULT_STREAM_END_GRACE_MS */
  readonly endGraceMs?: number;
}

/** Who hears how a lifecycle went; every callback is optional and called at most once. */
export interface StreamObserver<H> {
  /** The stream is open. */
  next?(handle: H): void;
  /** It could not open (the typed error of the step that failed). */
  error?(err: unknown): void;
  /** The connection is over (after `next`, or instead of it when the client left first). */
  complete?(): void;
}

/** Ends the connection from the service's side (shutdown): everything is released once. */
export interface StreamSubscription {
  unsubscribe(): void;
}

/**
 * One connection's life cycle, the same for every transport: count it, authorize,
 * take a slot, open the stream; then release everything exactly once, whatever comes
 * first: the client leaving (before, during or after the open), the stream's end, a
 * write error, shutdown (`unsubscribe()`).
 *
 * Shaped like a one-shot Observable (`subscribe` with next / error / complete): `next`
 * once the stream is open, `error` (with the typed error) only when it could not open,
 * `complete` when the connection is over; after `error` or `complete` nothing more is
 * said. It is a plain object rather than an RxJS Observable for memory: a held long-poll
 * or an idle stream keeps its lifecycle for its whole life, and an Observable keeps its
 * subscriber, observer and teardown closures and what they capture with it. Here the
 * connection keeps this one object (which is also the `StreamContext`), the port's
 * listener and the handle; the plan's steps are let go once they have run.
 *
 * A stream that has ended (`ctx.ended()`) still holds its slot until the client has
 * taken the last bytes and the connection closed, at most `endGraceMs`: a client that
 * stopped reading would otherwise keep the socket, and the memory of what the server
 * wrote into it, for as long as TCP keeps an unread connection (for ever, with
 * keepalive answered by the kernel). After the grace period the connection is destroyed.
 */
export class StreamLifecycle<H extends StreamHandle>
  implements StreamContext, StreamSubscription, DeadlineEntry
{
  private plan: StreamPlan<H> | undefined;
  private observer: StreamObserver<H> | undefined;
  private readonly transport: string;
  private readonly port: ConnectionPort;
  private readonly gauge: ConnectionGauge;
  private readonly graceMs: number;
  private readonly deadlines: LifecycleOptions['deadlines'];
  private started = false;
  private over = false;
  private releaseSlot: (() => void) | undefined;
  private handle: H | undefined;
  /** DeadlineEntry: the end grace period, once `ended()` (the queue's fields). */
  deadlineSlot = -1;
  deadlineAtMs = Infinity;

  constructor(plan: StreamPlan<H>, opts: LifecycleOptions) {
    this.plan = plan;
    this.transport = plan.transport;
    this.port = plan.port;
    this.gauge = opts.gauge;
    this.graceMs = opts.endGraceMs ?? DEFAULT_STREAM_END_GRACE_MS;
    this.deadlines = opts.deadlines;
  }

  /** The connection is over (client gone, or released): write nothing more. */
  get closed(): boolean {
    return this.over;
  }

  /**
   * Starts the connection's steps. One subscription per lifecycle: a connection happens
   * once.
   */
  subscribe(observer: StreamObserver<H> = {}): StreamSubscription {
    const plan = this.plan;
    if (this.started || plan === undefined) {
      throw new TypeError('a stream lifecycle can be subscribed to only once');
    }
    this.started = true;
    this.plan = undefined;
    this.observer = observer;
    this.gauge.connectionOpened(this.transport);
    // The port may call onGone synchronously (the client already left): the steps below
    // then see the connection over.
    this.port.watchGone(this.onGone);
    if (!this.over) {
      // After the connection is over an error has nobody to tell (dropped, like RxJS).
      this.run(plan).catch((err: unknown) => this.fail(err));
    }
    return this;
  }

  /** Shutdown: releases everything once; the observer hears `complete`. */
  unsubscribe(): void {
    this.finish();
  }

  ended(): void {
    if (this.over || this.deadlineSlot >= 0) return;
    this.deadlines.schedule(this, Date.now() + this.graceMs);
  }

  /** The grace period passed and the client has not taken its last bytes: tear down. */
  onDeadline(): void {
    this.port.destroy();
    this.finish();
  }

  private readonly onGone = (): void => this.finish();

  private async run(plan: StreamPlan<H>): Promise<void> {
    await plan.authorize();
    if (this.over) return;
    const slot = plan.acquireSlot();
    // Synchronous with the in-process limiter: no await (a microtask and its promises) then.
    const release = slot instanceof Promise ? await slot : slot;
    // The client may have left while a shared store counted the slot.
    if (this.over) {
      release();
      return;
    }
    this.releaseSlot = release;
    const opened = await plan.open(this);
    // The client may have left while the stream was opening (the replay is read
    // asynchronously): the handle is released at once.
    if (this.over) {
      opened.close();
      return;
    }
    this.handle = opened;
    this.observer?.next?.(opened);
  }

  /** The stream could not open: release what was taken, then tell the observer. */
  private fail(err: unknown): void {
    if (this.over) return;
    const observer = this.observer;
    this.release();
    observer?.error?.(err);
  }

  /** The connection is over: release what was taken, then tell the observer. */
  private finish(): void {
    if (this.over) return;
    const observer = this.observer;
    this.release();
    observer?.complete?.();
  }

  private release(): void {
    this.over = true;
    this.observer = undefined;
    this.deadlines.cancel(this);
    if (this.started) this.port.unwatchGone(this.onGone);
    this.handle?.close();
    this.handle = undefined;
    this.releaseSlot?.();
    this.releaseSlot = undefined;
    if (this.started) this.gauge.connectionClosed(this.transport);
  }
}

export function streamLifecycle<H extends StreamHandle>(
  plan: StreamPlan<H>,
  opts: LifecycleOptions,
): StreamLifecycle<H> {
  return new StreamLifecycle(plan, opts);
}

/**
 * Starts a lifecycle and resolves once its stream is open (with the handle), or with
 * undefined when the client left first; rejects with the error that kept it from
 * opening, so a handler can answer it as usual. The connection lives on after the
 * promise settles, until it is over.
 */
export function startStream<H extends StreamHandle>(
  lifecycle: StreamLifecycle<H>,
): Promise<H | undefined> {
  return new Promise((resolve, reject) => {
    lifecycle.subscribe(new Settle(resolve, reject));
  });
}

/**
 * startStream's observer. An open stream's lifecycle keeps it until the connection is
 * over; it lets go of the promise's functions as soon as the promise has settled.
 */
class Settle<H> implements StreamObserver<H> {
  constructor(
    private resolve: ((h: H | undefined) => void) | undefined,
    private reject: ((err: unknown) => void) | undefined,
  ) {}

  next(handle: H): void {
    const resolve = this.resolve;
    this.settled();
    resolve?.(handle);
  }

  error(err: unknown): void {
    const reject = this.reject;
    this.settled();
    reject?.(err);
  }

  complete(): void {
    const resolve = this.resolve;
    this.settled();
    resolve?.(undefined);
  }

  private settled(): void {
    this.resolve = undefined;
    this.reject = undefined;
  }
}
