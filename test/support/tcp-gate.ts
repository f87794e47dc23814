import { connect, createServer, type Server, type Socket } from 'node:net';
import { stablePort } from './stable-port';

/**
 * A TCP relay on a free loopback port in front of `127.0.0.1:targetPort` that a test can
 * shut: `shut()` cuts every relayed connection and refuses new ones (accepted and closed at
 * once, as a peer that is not there yet) until `open()`. Lets a test decide when a client
 * reaches a server again, instead of hoping its reconnect backoff is slow or fast enough.
 * `freeze()` makes every relayed client a peer that stopped reading.
 */
export class TcpGate {
  private readonly pairs = new Set<Socket>();
  private readonly upstreams = new Set<Socket>();
  private shutNow = false;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async listen(targetPort: number): Promise<TcpGate> {
    const server = createServer();
    // Below the ephemeral range, so no other listener takes the port while crashed.
    const port = await stablePort();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const gate = new TcpGate(server, port);
    server.on('connection', (client) => gate.relay(client, targetPort));
    return gate;
  }

  /** Connections relayed to the server right now: what the server sees. */
  get connections(): number {
    return this.upstreams.size;
  }

  /** Cuts every relayed connection and refuses new ones until `open()`. */
  shut(): void {
    this.shutNow = true;
    for (const s of this.pairs) s.destroy();
    this.pairs.clear();
  }

  open(): void {
    this.shutNow = false;
  }

  /**
   * Stops reading from the server on every relayed connection, while what the clients
   * send still reaches it: the server's writes (frames, a close frame, GOAWAY) stay in the
   * kernel buffers, as with a client that hung without closing its socket.
   */
  freeze(): void {
    for (const upstream of this.upstreams) {
      upstream.unpipe();
      upstream.pause();
    }
  }

  /** Cuts everything and stops listening. */
  async close(): Promise<void> {
    this.shut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** A crashed service: connections cut and the port refused (ECONNREFUSED) until `restart()`. */
  async crash(): Promise<void> {
    await this.close();
  }

  /** The service back on the same port; resolves once it accepts connections again. */
  async restart(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.open();
  }

  private relay(client: Socket, targetPort: number): void {
    if (this.shutNow) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    // Either side ending (or failing) ends both, as one connection would.
    const cut = () => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(client);
      this.pairs.delete(upstream);
      this.upstreams.delete(upstream);
    };
    this.upstreams.add(upstream);
    for (const s of [client, upstream]) {
      this.pairs.add(s);
      s.on('error', cut);
      s.on('close', cut);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
