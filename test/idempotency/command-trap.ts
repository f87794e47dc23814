import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay on a free loopback port in front of `127.0.0.1:targetPort` that can hold
 * one command on its way to the server: once `arm()`ed, the first client bytes that
 * contain `marker` (e.g. a Lua script's SHA, which only the publish's EVALSHA carries)
 * are parked, with everything that connection sends after them, until the test
 * `release()`s them (the server runs the command late, after its caller gave up) or
 * `cut()`s that connection (the server never sees it). Other connections through the
 * relay (the subscriber, the auth state) flow untouched, unlike a server-wide
 * `CLIENT PAUSE`, so the test stalls exactly the publish and nothing before it.
 */
export class CommandTrap {
  private readonly sockets = new Set<Socket>();
  private armed = false;
  private trapped?: { client: Socket; upstream: Socket; held: Buffer[] };
  /** Client connections accepted so far (a reconnect shows as one more). */
  accepted = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly marker: Buffer,
  ) {}

  static async listen(targetPort: number, marker: string): Promise<CommandTrap> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const trap = new CommandTrap(
      server,
      (server.address() as { port: number }).port,
      Buffer.from(marker),
    );
    server.on('connection', (client) => trap.relay(client, targetPort));
    return trap;
  }

  /** Parks the next command that carries the marker. */
  arm(): void {
    this.armed = true;
  }

  /** Whether a command is parked now. */
  get holding(): boolean {
    return this.trapped !== undefined;
  }

  /** Lets the parked bytes through, late, and relays that connection normally again. */
  release(): void {
    const t = this.take();
    for (const chunk of t.held) t.upstream.write(chunk);
  }

  /** Drops the connection holding the parked command: the server never receives it. */
  cut(): void {
    const t = this.take();
    t.client.destroy();
    t.upstream.destroy();
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private take(): NonNullable<CommandTrap['trapped']> {
    const t = this.trapped;
    if (t === undefined) throw new Error('no command is parked');
    this.trapped = undefined;
    return t;
  }

  private relay(client: Socket, targetPort: number): void {
    this.accepted++;
    const upstream = connect(targetPort, '127.0.0.1');
    const cut = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('error', cut);
      s.on('close', cut);
    }
    upstream.pipe(client);
    // The marker (a 40-character SHA) may straddle two reads: keep the previous tail.
    let tail = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      const t = this.trapped;
      if (t?.client === client) {
        t.held.push(chunk);
        return;
      }
      const seen = Buffer.concat([tail, chunk]);
      tail = seen.subarray(Math.max(0, seen.length - this.marker.length + 1));
      if (this.armed && seen.includes(this.marker)) {
        this.armed = false;
        this.trapped = { client, upstream, held: [chunk] };
        return;
      }
      upstream.write(chunk);
    });
  }
}
