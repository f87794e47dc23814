import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import {
  createServer,
  createConnection,
  type NetConnectOpts,
  type Server,
  type Socket,
} from 'node:net';
import type { AddressInfo } from 'node:net';
import { Server as IoServer } from 'socket.io';
import { Http1Getter } from './http-stream';
import { batchedAgent, ReadBatcher } from './read-batcher';
import { SocketIoConnector } from './socketio-connector';
import { SseConnector } from './sse-connector';
import type { StreamHandlers } from './transport';
import type { WireEvent } from './wire-types';

/**
 * The batcher against real sockets: what it changes is how often the client reads (its
 * 'data' events), never what arrives. The server side writes one small message at a time,
 * as the service writes one event per delivery.
 */

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/**
 * One turn of the event loop that polls I/O: on loopback a write is in the peer's receive
 * queue when it returns, so a client that reads as data arrives has read it after this.
 * Two immediates, because the first may run in the turn whose poll phase is over.
 */
const nextPoll = (): Promise<void> => new Promise((r) => setImmediate(() => setImmediate(r)));
const portOf = (s: { address(): unknown }): number => (s.address() as AddressInfo).port;

async function until(cond: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(10);
  }
}

describe('ReadBatcher on raw sockets', () => {
  let server: Server;
  let peer: Socket | undefined;
  const clients: Socket[] = [];
  let batcher: ReadBatcher | undefined;

  beforeEach(async () => {
    peer = undefined;
    server = createServer((s) => {
      peer = s;
      s.setNoDelay(true);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });

  afterEach(async () => {
    batcher?.stop();
    batcher = undefined;
    for (const c of clients.splice(0)) c.destroy();
    peer?.destroy();
    await new Promise((r) => server.close(r));
  });

  /** A connected client socket and a count of its reads and bytes. */
  async function connect(highWaterMarkOne: boolean): Promise<{
    socket: Socket;
    reads: () => number;
    text: () => string;
  }> {
    const socket = createConnection({
      port: portOf(server),
      host: '127.0.0.1',
      ...(highWaterMarkOne ? { readableHighWaterMark: 1 } : {}),
    } as NetConnectOpts);
    clients.push(socket);
    let reads = 0;
    let text = '';
    socket.on('data', (b: Buffer) => {
      reads += 1;
      text += b.toString();
    });
    await until(() => peer !== undefined && !socket.connecting);
    return { socket, reads: () => reads, text: () => text };
  }

  /** Ten messages, each its own TCP segment, a poll of the client's loop apart. */
  async function writeTen(): Promise<string> {
    let all = '';
    for (let i = 0; i < 10; i++) {
      const m = `m${i};`;
      all += m;
      peer?.write(m);
      await nextPoll();
    }
    return all;
  }

  it('reads as events arrive without a batcher: one read per message', async () => {
    const c = await connect(true);
    const sent = await writeTen();
    await until(() => c.text() === sent);
    expect(c.reads()).toBeGreaterThanOrEqual(8);
  });

  it('reads a batch of messages in a couple of reads, losing none', async () => {
    batcher = new ReadBatcher(500);
    const c = await connect(true);
    batcher.add(c.socket);
    const sent = await writeTen();
    await until(() => c.text() === sent, 2_000);
    // The one read a paused socket still makes, then the batch: not one read per message.
    expect(c.reads()).toBeLessThanOrEqual(3);
  });

  it("needs the socket's high-water mark of one byte: a default socket reads each message", async () => {
    batcher = new ReadBatcher(500);
    const c = await connect(false);
    batcher.add(c.socket);
    const sent = await writeTen();
    await until(() => c.text() === sent, 2_000);
    // Paused, it went on reading into its buffer and hands each read out on resume.
    expect(c.reads()).toBeGreaterThanOrEqual(8);
  });

  it('reads every socket within one batch period, each in its own slice', async () => {
    const c = await connect(true);
    // The batcher's clock only (its interval); sockets and the loop's turns stay real.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      batcher = new ReadBatcher(200);
      batcher.add(c.socket);
      jest.advanceTimersByTime(250); // a whole period passes with nothing to read
      await nextPoll(); // the pause after its slice's read lands
      peer?.write('late;');
      let waitedMs = 0;
      while (c.text() !== 'late;' && waitedMs < 1_000) {
        jest.advanceTimersByTime(10);
        waitedMs += 10;
        await nextPoll();
      }
      expect(c.text()).toBe('late;');
      // It waited for its slice's turn, never longer than a period.
      expect(waitedMs).toBeLessThanOrEqual(200);
    } finally {
      jest.useRealTimers();
    }
  });

  it('stop() returns every socket to reading as events arrive', async () => {
    batcher = new ReadBatcher(5_000);
    const c = await connect(true);
    batcher.add(c.socket);
    batcher.stop();
    const t0 = Date.now();
    peer?.write('now;');
    await until(() => c.text() === 'now;', 1_000);
    expect(Date.now() - t0).toBeLessThan(500);
  });

  it('lets go of a socket once it closes, and holds a socket added twice once', async () => {
    batcher = new ReadBatcher(100);
    const c = await connect(true);
    batcher.add(c.socket);
    batcher.add(c.socket);
    expect(batcher.size).toBe(1);
    c.socket.destroy();
    await until(() => batcher?.size === 0);
    expect(batcher.readers()).toEqual([]);
  });

  it('rejects a period shorter than its tick', () => {
    expect(() => new ReadBatcher(5)).toThrow(RangeError);
    expect(() => new ReadBatcher(12.5)).toThrow(RangeError);
  });
});

/** Handlers that collect what a connector delivers. */
function collect(): { handlers: StreamHandlers; events: WireEvent[]; opened: () => boolean } {
  const events: WireEvent[] = [];
  let opened = false;
  return {
    events,
    opened: () => opened,
    handlers: {
      onOpen: () => (opened = true),
      onEvent: (e) => events.push(e),
      onReset: () => undefined,
      onSkipped: () => undefined,
      onEnd: () => undefined,
      onError: (code) => {
        throw new Error(`stream failed: ${code}`);
      },
    },
  };
}

const eventJson = (seq: number): string =>
  JSON.stringify({ orderId: 'o-1', seq, status: 'PAID', publishedAtUs: Date.now() * 1000 });

describe('connectors reading in batches', () => {
  it('SSE over HTTP/1.1: every event arrives, in fewer reads than events', async () => {
    let res: ServerResponse | undefined;
    const http = createHttpServer((_req, r) => {
      r.writeHead(200, { 'content-type': 'text/event-stream' });
      r.write(`id: 1\nevent: status\ndata: ${eventJson(1)}\n\n`);
      res = r;
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const batcher = new ReadBatcher(400);
    const getter = new Http1Getter('127.0.0.1', portOf(http), batcher);
    const connector = new SseConnector('sse', getter, 'bare', undefined);
    const got = collect();
    let reads = 0;
    const stream = connector.open('o-1', 0, got.handlers);
    try {
      await until(() => got.events.length === 1);
      expect(batcher.size).toBe(1);
      // Count the client's socket reads from here on (the batcher holds the response).
      for (const r of batcher.readers()) {
        (r as IncomingMessage).socket.on('data', () => (reads += 1));
      }
      for (let seq = 2; seq <= 11; seq++) {
        res?.write(`id: ${seq}\nevent: status\ndata: ${eventJson(seq)}\n\n`);
        await nextPoll();
      }
      await until(() => got.events.length === 11, 2_000);
      expect(got.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      expect(reads).toBeLessThanOrEqual(4);
    } finally {
      stream.close();
      batcher.stop();
      await connector.close();
      res?.destroy();
      await new Promise((r) => http.close(r));
    }
  });

  it('socket.io: the acknowledged socket is read in batches and every event arrives', async () => {
    const http = createHttpServer();
    const io = new IoServer(http, { transports: ['websocket'] });
    const sockets: { emit(ev: string, v: unknown): void }[] = [];
    io.of('/orders').on('connection', (s) => {
      s.on('subscribe', (_req: unknown, ack: (v: unknown) => void) => {
        ack({ ok: true });
        sockets.push(s);
      });
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const batcher = new ReadBatcher(400);
    const connector = new SocketIoConnector(
      `http://127.0.0.1:${portOf(http)}`,
      'bare',
      undefined,
      batcher,
    );
    const got = collect();
    const stream = connector.open('o-1', 0, got.handlers);
    try {
      await until(() => got.opened() && sockets.length === 1);
      expect(batcher.size).toBe(1);
      let reads = 0;
      for (const r of batcher.readers()) (r as Socket).on('data', () => (reads += 1));
      for (let seq = 1; seq <= 10; seq++) {
        sockets[0].emit('status', JSON.parse(eventJson(seq)));
        await nextPoll();
      }
      await until(() => got.events.length === 10, 2_000);
      expect(got.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(reads).toBeLessThanOrEqual(4);
    } finally {
      stream.close();
      batcher.stop();
      await connector.close();
      await io.close();
    }
  });

  it('gives its sockets a high-water mark of one byte', async () => {
    const server = createServer((s) => s.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const agent = batchedAgent();
    const socket = agent.createConnection({ host: '127.0.0.1', port: portOf(server) }) as Socket;
    try {
      expect(socket.readableHighWaterMark).toBe(1);
    } finally {
      socket.destroy();
      agent.destroy();
      await new Promise((r) => server.close(r));
    }
  });
});
