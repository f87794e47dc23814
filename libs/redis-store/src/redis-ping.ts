import { Cluster, type Redis } from 'ioredis';

/**
 * Whether Redis still answers, not only whether its connection is up: a Redis that is
 * frozen (SIGSTOP, a stuck host, a long fork) keeps the TCP connection `ready` while every
 * command times out. One PING at a time, every `intervalMs`, to every node the client
 * talks to (every master of a cluster); each is bounded by the connection's command
 * timeout. `answering` is false from the first PING that fails until one succeeds again.
 */
export class RedisPing {
  private ok = true;
  private inFlight = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly client: Redis | Cluster,
    intervalMs: number,
  ) {
    this.timer = setInterval(() => this.ping(), intervalMs);
    this.timer.unref();
  }

  /** False while the last PING to some node failed (timed out or refused). */
  get answering(): boolean {
    return this.ok;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private ping(): void {
    // Not while the connection is down: that is already known, and a PING would fail at
    // once without the offline queue; nor twice at a time, so a hung Redis gets no pile-up.
    if (this.inFlight || this.client.status !== 'ready') return;
    this.inFlight = true;
    const nodes: readonly (Redis | Cluster)[] =
      this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
    Promise.all(nodes.map((node) => node.ping())).then(
      () => this.settle(true),
      () => this.settle(false),
    );
  }

  private settle(ok: boolean): void {
    this.inFlight = false;
    this.ok = ok;
  }
}
