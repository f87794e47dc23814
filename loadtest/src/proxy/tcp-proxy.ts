import {
  createConnection,
  createServer,
  type AddressInfo,
  type Server,
  type Socket,
} from 'node:net';

/** Bytes the proxy holds for one direction before it stops reading from the source. */
export const DEFAULT_HIGH_WATER_MARK_BYTES = 64 * 1024;

export interface TcpProxyOptions {
  readonly targetHost: string;
  readonly targetPort: number;
  /** Loopback only: the load test never listens on a routable address. @default '127.0.0.1' */
  readonly listenHost?: string;
  /** Fixed delay added to every chunk in each direction (a WAN round trip is 2x this). @default 0 */
  readonly oneWayDelayMs?: number;
  /**
   * Bandwidth of each connection from server to client (bytes/s); undefined = unthrottled.
   * Applied per connection, so proxying only the slow subscriber throttles only it.
   */
  readonly downstreamBytesPerSec?: number;
  /** @default DEFAULT_HIGH_WATER_MARK_BYTES */
  readonly highWaterMarkBytes?: number;
}

export interface ByteCounts {
  /** client -> server */
  up: number;
  /** server -> client */
  down: number;
}

/**
 * One direction of one proxied connection: count, then delay, then throttle, then write.
 * The source is paused while more than `highWaterMark` bytes are in flight here, so a
 * throttled client pushes back on the server exactly as a slow real link would (TCP
 * windows fill up), instead of the proxy buffering everything and hiding the slowness.
 */
class Pipe {
  private readonly queue: Buffer[] = [];
  private pending = 0;
  private sending = false;
  private srcEnded = false;
  private nextSendAt = 0;

  constructor(
    private readonly src: Socket,
    private readonly dst: Socket,
    private readonly count: (n: number) => void,
    private readonly delayMs: number,
    private readonly bytesPerSec: number | undefined,
    private readonly highWaterMark: number,
  ) {
    src.on('data', (chunk: Buffer) => this.onData(chunk));
    src.on('end', () => {
      this.srcEnded = true;
      this.maybeEnd();
    });
  }

  private onData(chunk: Buffer): void {
    this.count(chunk.length);
    this.pending += chunk.length;
    if (this.pending > this.highWaterMark) this.src.pause();
    // A fixed delay keeps order: timers with equal delays fire in the order they were set.
    if (this.delayMs > 0) setTimeout(() => this.enqueue(chunk), this.delayMs);
    else this.enqueue(chunk);
  }

  private enqueue(chunk: Buffer): void {
    this.queue.push(chunk);
    if (!this.sending) this.pump();
  }

  private pump(): void {
    this.sending = true;
    while (this.queue.length > 0) {
      if (this.dst.destroyed) return;
      let chunk = this.queue[0];
      if (this.bytesPerSec !== undefined) {
        const now = performance.now();
        if (now < this.nextSendAt) {
          setTimeout(() => this.pump(), Math.ceil(this.nextSendAt - now));
          return;
        }
        // Send at most 10 ms worth of bandwidth at a time so the rate stays smooth.
        const slice = Math.max(1, Math.floor(this.bytesPerSec / 100));
        if (chunk.length > slice) {
          this.queue[0] = chunk.subarray(slice);
          chunk = chunk.subarray(0, slice);
        } else {
          this.queue.shift();
        }
        this.nextSendAt = Math.max(now, this.nextSendAt) + (chunk.length / this.bytesPerSec) * 1000;
      } else {
        this.queue.shift();
      }
      this.pending -= chunk.length;
      if (this.pending <= this.highWaterMark && this.src.isPaused()) this.src.resume();
      if (!this.dst.write(chunk)) {
        this.dst.once('drain', () => this.pump());
        return;
      }
    }
    this.sending = false;
    this.maybeEnd();
  }

  private maybeEnd(): void {
    if (this.srcEnded && this.queue.length === 0 && !this.dst.destroyed) this.dst.end();
  }
}

/**
 * A byte-counting TCP proxy for the load test (the method of the wire-cost article, seed
 * 001): it counts TCP payload bytes in both directions (request lines, headers, chunked
 * encoding, frame headers; not IP/TCP headers or ACKs), and can add a fixed one-way delay
 * and throttle each connection's server-to-client bandwidth.
 */
export class TcpProxy {
  readonly bytes: ByteCounts = { up: 0, down: 0 };
  connections = 0;
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly options: TcpProxyOptions) {
    const { oneWayDelayMs = 0, downstreamBytesPerSec } = options;
    if (!(oneWayDelayMs >= 0))
      throw new TypeError(`oneWayDelayMs must be >= 0, got ${oneWayDelayMs}`);
    if (downstreamBytesPerSec !== undefined && !(downstreamBytesPerSec > 0)) {
      throw new TypeError(`downstreamBytesPerSec must be > 0, got ${downstreamBytesPerSec}`);
    }
  }

  get port(): number {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('proxy is not listening');
    return address.port;
  }

  /** Resets the byte counters (e.g. after connections are set up, to count only events). */
  resetCounts(): ByteCounts {
    const snapshot = { ...this.bytes };
    this.bytes.up = 0;
    this.bytes.down = 0;
    return snapshot;
  }

  async listen(port = 0): Promise<number> {
    const server = createServer((client) => this.onConnection(client));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.options.listenHost ?? '127.0.0.1', () => resolve());
    });
    return this.port;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private onConnection(client: Socket): void {
    const { targetHost, targetPort, oneWayDelayMs = 0, downstreamBytesPerSec } = this.options;
    const hwm = this.options.highWaterMarkBytes ?? DEFAULT_HIGH_WATER_MARK_BYTES;
    this.connections += 1;
    const upstream = createConnection({ host: targetHost, port: targetPort });
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    }
    // A reset on either side ends both: the proxy must not keep half a connection alive.
    const destroyBoth = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', destroyBoth);
    upstream.on('error', destroyBoth);
    client.on('close', () => upstream.destroySoon());
    upstream.on('close', () => client.destroySoon());
    new Pipe(client, upstream, (n) => (this.bytes.up += n), oneWayDelayMs, undefined, hwm);
    new Pipe(
      upstream,
      client,
      (n) => (this.bytes.down += n),
      oneWayDelayMs,
      downstreamBytesPerSec,
      hwm,
    );
  }
}
