import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { startTestApp, type TestApp } from '../support/test-app';
import { once } from '../support/wait-for';

const HEADERS_TIMEOUT_MS = 1_000;
const HANDSHAKE_TIMEOUT_MS = 1_000;
const PREFACE_TIMEOUT_MS = 1_000;
/** Node checks header/request deadlines periodically; the listener must close well within this. */
const CLOSE_BOUND_MS = 4_000;

/** Sends one more header line every `everyMs` and never ends the head (slowloris). */
function dripHeaders(socket: Socket, everyMs: number): NodeJS.Timeout {
  // The server ends the connection mid-drip: a late write then fails with EPIPE.
  socket.on('error', () => undefined);
  socket.write('GET /health/live HTTP/1.1\r\nHost: localhost\r\n');
  let n = 0;
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write(`x-drip-${n++}: 1\r\n`);
  }, everyMs);
  timer.unref();
  return timer;
}

/** Resolves with how long after `startedAt` the socket closed; rejects after the bound. */
async function closedWithin(socket: Socket, startedAt: number): Promise<number> {
  await once(socket, 'close', CLOSE_BOUND_MS + 1_000);
  return performance.now() - startedAt;
}

/**
 * Header, request and TLS handshake timeouts hold on every listener: a client that opens
 * a connection and then dawdles (no ClientHello, headers a line at a time) is closed
 * within the configured bound on the plain port and the TLS port alike.
 */
describe('listener timeouts', () => {
  let app: TestApp;
  const sockets: Socket[] = [];
  const timers: NodeJS.Timeout[] = [];

  beforeAll(async () => {
    app = await startTestApp({
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS * 2),
      HTTP_TLS_HANDSHAKE_TIMEOUT_MS: String(HANDSHAKE_TIMEOUT_MS),
      GRPC_PREFACE_TIMEOUT_MS: String(PREFACE_TIMEOUT_MS),
    });
  });
  afterEach(() => {
    for (const t of timers.splice(0)) clearInterval(t);
    for (const s of sockets.splice(0)) s.destroy();
  });
  afterAll(async () => {
    await app.close();
  });

  it('closes a TLS connection that never sends a ClientHello', async () => {
    const socket = tcpConnect(app.ports.https, '127.0.0.1');
    sockets.push(socket);
    await once(socket, 'connect');
    const took = await closedWithin(socket, performance.now());
    expect(took).toBeLessThan(CLOSE_BOUND_MS);
  });

  it('closes an HTTP/1.1-over-TLS slowloris (headers never end)', async () => {
    const socket = tlsConnect({
      host: '127.0.0.1',
      port: app.ports.https,
      ca: app.tlsCert,
      servername: 'localhost',
      ALPNProtocols: ['http/1.1'],
    });
    sockets.push(socket);
    await once(socket, 'secureConnect');
    expect(socket.alpnProtocol).toBe('http/1.1');
    const startedAt = performance.now();
    timers.push(dripHeaders(socket, 200));
    const took = await closedWithin(socket, startedAt);
    expect(took).toBeLessThan(CLOSE_BOUND_MS);
  });

  it('closes an HTTP/1.1 slowloris on the plain port', async () => {
    const socket = tcpConnect(app.ports.http, '127.0.0.1');
    sockets.push(socket);
    await once(socket, 'connect');
    const startedAt = performance.now();
    timers.push(dripHeaders(socket, 200));
    const took = await closedWithin(socket, startedAt);
    expect(took).toBeLessThan(CLOSE_BOUND_MS);
  });

  // Without a bound such a connection stayed until the keepalive PING went unanswered
  // (GRPC_KEEPALIVE_TIME_MS + GRPC_KEEPALIVE_TIMEOUT_MS, about 40 s by default).
  it.each([
    ['sends nothing', ''],
    ['sends half the HTTP/2 preface', 'PRI * HTTP/2.0\r\n'],
  ])('closes a gRPC connection that %s', async (_what, bytes) => {
    const socket = tcpConnect(app.ports.grpc, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => undefined);
    // The server sends its SETTINGS at once: read (and drop) them, or the close goes unseen.
    socket.resume();
    await once(socket, 'connect');
    const startedAt = performance.now();
    if (bytes !== '') socket.write(bytes);
    const took = await closedWithin(socket, startedAt);
    expect(took).toBeLessThan(CLOSE_BOUND_MS);
  });
});
