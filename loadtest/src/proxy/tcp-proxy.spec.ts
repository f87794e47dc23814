import {
  createConnection,
  createServer,
  type AddressInfo,
  type Server,
  type Socket,
} from 'node:net';
import { TcpProxy } from './tcp-proxy';

/** A server on port 0 that answers each chunk with `reply(chunk)`. */
async function startServer(reply: (chunk: Buffer, socket: Socket) => void): Promise<Server> {
  const server = createServer((s) => s.on('data', (c: Buffer) => reply(c, s)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return server;
}

async function connect(port: number): Promise<Socket> {
  const s = createConnection({ host: '127.0.0.1', port });
  await new Promise<void>((r) => s.once('connect', () => r()));
  return s;
}

function read(socket: Socket, bytes: number): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let n = 0;
    const onData = (c: Buffer): void => {
      parts.push(c);
      n += c.length;
      if (n >= bytes) {
        socket.off('data', onData);
        resolve(Buffer.concat(parts));
      }
    };
    socket.on('data', onData);
  });
}

describe('TcpProxy', () => {
  let server: Server;
  let proxy: TcpProxy;
  const sockets: Socket[] = [];

  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await proxy?.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('forwards both ways and counts exact payload bytes of a known exchange', async () => {
    server = await startServer((c, s) =>
      s.write(c.toString() === 'GET /x\r\n' ? 'HTTP 200 hello!\r\n' : 'bad'),
    );
    proxy = new TcpProxy({
      targetHost: '127.0.0.1',
      targetPort: (server.address() as AddressInfo).port,
    });
    const client = await connect(await proxy.listen());
    sockets.push(client);
    client.write('GET /x\r\n');
    expect((await read(client, 17)).toString()).toBe('HTTP 200 hello!\r\n');
    expect(proxy.bytes).toEqual({ up: 8, down: 17 });
    expect(proxy.connections).toBe(1);
    expect(proxy.resetCounts()).toEqual({ up: 8, down: 17 });
    expect(proxy.bytes).toEqual({ up: 0, down: 0 });
  });

  it('adds the one-way delay in each direction (round trip >= 2x delay, within bounds)', async () => {
    server = await startServer((c, s) => s.write(c));
    proxy = new TcpProxy({
      targetHost: '127.0.0.1',
      targetPort: (server.address() as AddressInfo).port,
      oneWayDelayMs: 25,
    });
    const client = await connect(await proxy.listen());
    sockets.push(client);
    const rtts: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const t0 = performance.now();
      client.write('ping');
      await read(client, 4);
      rtts.push(performance.now() - t0);
    }
    // Every round trip pays both delays; the fastest shows there is no more than that
    // (a stall of the shared CI host can only add time, so the bound uses the minimum).
    expect(Math.min(...rtts)).toBeGreaterThanOrEqual(49);
    expect(Math.min(...rtts)).toBeLessThan(50 + 40);
  });

  it('throttles the server-to-client direction to the configured bandwidth', async () => {
    const size = 100_000;
    server = await startServer((_c, s) => s.write(Buffer.alloc(size, 1)));
    proxy = new TcpProxy({
      targetHost: '127.0.0.1',
      targetPort: (server.address() as AddressInfo).port,
      downstreamBytesPerSec: 200_000,
      highWaterMarkBytes: 16 * 1024,
    });
    const client = await connect(await proxy.listen());
    sockets.push(client);
    // Two transfers: each must take at least the throttled time; the faster of the two
    // must not take much longer (a stall of the shared CI host can only add time).
    const elapsed: number[] = [];
    for (let i = 0; i < 2; i += 1) {
      const t0 = performance.now();
      client.write('go');
      expect((await read(client, size)).length).toBe(size);
      elapsed.push(performance.now() - t0);
    }
    // 100 kB at 200 kB/s: 0.5 s; the first slice goes out at once, so allow a little less.
    expect(Math.min(...elapsed)).toBeGreaterThanOrEqual(450);
    expect(Math.min(...elapsed)).toBeLessThan(1_000);
    expect(proxy.bytes.down).toBe(2 * size);
  });

  it('rejects invalid options', () => {
    server = createServer();
    expect(
      () => new TcpProxy({ targetHost: '127.0.0.1', targetPort: 1, oneWayDelayMs: -1 }),
    ).toThrow(TypeError);
    expect(
      () => new TcpProxy({ targetHost: '127.0.0.1', targetPort: 1, downstreamBytesPerSec: 0 }),
    ).toThrow(TypeError);
  });
});
