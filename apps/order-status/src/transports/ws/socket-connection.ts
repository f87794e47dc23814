import type { Principal } from '@app/auth';
import type { StreamContext, StreamHandle } from '../../connections/stream-lifecycle';

/**
 * One socket's connection, as the handshake middleware opened it through the connection
 * life cycle (slot, gauge, gone, grace): the gateway hangs the socket's own cleanup on it
 * (its subscriptions, the expiry timer), and the life cycle runs that cleanup exactly once
 * when the connection is over.
 */
export class SocketConnection implements StreamHandle {
  private readonly cleanup: (() => void)[] = [];
  private closed = false;

  constructor(
    readonly principal: Principal,
    readonly ctx: StreamContext,
  ) {}

  /** Runs `fn` when the connection is over (at once if it already is). */
  onClose(fn: () => void): void {
    if (this.closed) fn();
    else this.cleanup.push(fn);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const fn of this.cleanup.splice(0)) fn();
  }
}
