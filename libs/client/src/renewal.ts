import type { ConnectionEnd, ConnectRequest, Connector } from './transports/connector';

/** One transport connection of a renewing chain. */
interface Link {
  readonly ctl: AbortController;
  /** Its stream is open and it carries the watch's items. */
  live: boolean;
  /** Let go after its successor opened: whatever it settles with is ignored. */
  retired: boolean;
}

/**
 * What connectRenewing needs from the watch: the request for one connection (its own
 * signal, and whether it is the first of the chain or a successor).
 */
export type RequestFactory = (signal: AbortSignal, successor: boolean) => ConnectRequest;

/**
 * One stream that outlives its credentials: when the token changes while a connection
 * is open (`renew()`), a successor connection is opened with the new token, resuming
 * after what the watch received, and the old one is let go once the successor is open
 * (make-before-break). Items of both flow through the watch's de-duplication, so the
 * overlap costs duplicates dropped, never a gap. A successor that fails before it opens
 * is abandoned: the old connection goes on until its own end. Settles as the live
 * connection does; `signal` (the attempt's) cancels every link.
 */
export class RenewingConnection {
  private live: Link | undefined;
  private successor: Link | undefined;
  /** The live connection settled: the chain is over and renews nothing more. */
  private over = false;
  /** The live connection's end, held while its successor may still open. */
  private waiting: (() => void) | undefined;
  private settle!: { resolve: (end: ConnectionEnd) => void; reject: (err: unknown) => void };
  readonly ended: Promise<ConnectionEnd>;

  constructor(
    private readonly connector: Connector,
    private readonly request: RequestFactory,
    private readonly signal: AbortSignal,
  ) {
    this.ended = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    this.start(false);
  }

  /** The token changed: open a successor unless one is on its way or nothing is open. */
  renew(): void {
    if (this.over || this.signal.aborted || this.successor !== undefined) return;
    if (this.live === undefined || !this.live.live) return;
    this.start(true);
  }

  /** The connection is open and carrying items: a renewal now would be make-before-break. */
  get open(): boolean {
    return this.live?.live === true;
  }

  /** Called by a link's `opened`: the first link goes live; a successor takes over. */
  opened(link: Link): void {
    if (link.live) return;
    link.live = true;
    if (link !== this.successor) return;
    const old = this.live;
    this.live = link;
    this.successor = undefined;
    this.waiting = undefined;
    if (old !== undefined) {
      old.retired = true;
      old.ctl.abort();
    }
  }

  private start(successor: boolean): Link {
    const ctl = new AbortController();
    const link: Link = { ctl, live: false, retired: false };
    // Known before connect(): a transport may report the open synchronously.
    if (successor) this.successor = link;
    else this.live = link;
    const onAbort = () => ctl.abort();
    this.signal.addEventListener('abort', onAbort, { once: true });
    const req = this.request(ctl.signal, successor);
    void this.connector
      .connect({
        ...req,
        opened: (afterSeq) => {
          this.opened(link);
          req.opened(afterSeq);
        },
      })
      .then(
        (end) => this.settled(link, () => this.settle.resolve(end)),
        (err: unknown) => this.settled(link, () => this.settle.reject(err)),
      )
      .finally(() => {
        this.signal.removeEventListener('abort', onAbort);
        ctl.abort();
      });
    return link;
  }

  private settled(link: Link, settle: () => void): void {
    if (link.retired) return;
    if (link === this.successor) {
      this.successor = undefined;
      // It never opened: the live connection goes on with the old token, or, if it has
      // already ended, its end is the chain's.
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.();
      return;
    }
    if (this.successor !== undefined) {
      // The old connection ended (its token expired, say) while its successor is on its
      // way: wait for the successor rather than break the stream.
      link.retired = true;
      this.waiting = () => this.finish(settle);
      return;
    }
    this.finish(settle);
  }

  private finish(settle: () => void): void {
    this.over = true;
    this.successor?.ctl.abort();
    this.successor = undefined;
    settle();
  }
}
