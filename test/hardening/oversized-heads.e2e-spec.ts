import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { ErrorCode, type ErrorBody } from '@app/contracts';
import { startTestApp, type TestApp } from '../support/test-app';
import { once } from '../support/wait-for';

/** What the server answered a raw request with: its status and body, read to the close. */
async function answerTo(socket: Socket, head: string): Promise<{ status: number; body: string }> {
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  // The server may close before it has read all of an oversized head: the rest fails.
  socket.on('error', () => undefined);
  socket.write(head);
  await once(socket, 'close', 5_000);
  const text = Buffer.concat(chunks).toString('latin1');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
  return { status, body: text.slice(text.indexOf('\r\n\r\n') + 4) };
}

const LONG_URL = `GET /v1/orders/${'u'.repeat(100_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`;
const LONG_HEADER = `GET /health/live HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'h'.repeat(70_000)}\r\n\r\n`;

/**
 * A request head over Node's limit (16 KiB): a URL that does not fit is 414 URI Too Long
 * (RFC 9110 section 15.5.15), as docs/routes.md says; a header section that does not fit
 * stays 431 (RFC 6585 section 5). Both in the API's error shape, on the plain port and on
 * HTTP/1.1 over TLS.
 */
describe('request heads over the size limit', () => {
  let app: TestApp;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterEach(() => {
    for (const s of sockets.splice(0)) s.destroy();
  });
  afterAll(async () => {
    await app.close();
  });

  async function connect(listener: 'plain' | 'tls'): Promise<Socket> {
    if (listener === 'plain') {
      const socket = tcpConnect(app.ports.http, '127.0.0.1');
      sockets.push(socket);
      await once(socket, 'connect');
      return socket;
    }
    const socket = tlsConnect({
      host: '127.0.0.1',
      port: app.ports.https,
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
    });
    sockets.push(socket);
    await once(socket, 'secureConnect');
    return socket;
  }

  it.each([
    ['plain', 'a 100 KB URL', 414, LONG_URL],
    ['plain', 'a 70 KB header', 431, LONG_HEADER],
    ['tls', 'a 100 KB URL', 414, LONG_URL],
    ['tls', 'a 70 KB header', 431, LONG_HEADER],
  ] as const)('%s port: %s is %d', async (listener, _what, expected, head) => {
    const answer = await answerTo(await connect(listener), head);
    expect(answer.status).toBe(expected);
    expect((JSON.parse(answer.body) as ErrorBody).error.code).toBe(ErrorCode.InvalidArgument);
  });
});
