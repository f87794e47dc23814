import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { status as GrpcCode } from '@grpc/grpc-js';
import { io } from 'socket.io-client';
import { Agent, request } from 'undici';
import { ErrorCode, type ErrorBody } from '@app/contracts';
import { framedMessage } from '../../loadtest/src/clients/grpc-frame';
import { literalBlock } from '../../loadtest/src/clients/lean/hpack-literals';
import { RawH2Connection, type H2Fields } from '../../loadtest/src/clients/lean/raw-h2-connection';
import { startTestApp, type TestApp } from '../support/test-app';
import { once } from '../support/wait-for';

const ROUTES: [string, string, string][] = [
  ['snapshot', 'GET', ''],
  ['long-poll', 'GET', '/events?wait=0'],
  ['SSE', 'GET', '/stream'],
  ['publish', 'POST', '/status'],
];

/**
 * Two `Authorization` headers are a request the service cannot read one way: Node keeps
 * the first, a proxy in front may keep the last. Every route that reads the header
 * refuses it (400 / socket.io `invalid_argument`) whichever comes first, on every
 * listener, rather than authenticating one of them.
 */
describe('two Authorization headers', () => {
  let app: TestApp;
  let good: string;
  const bad = 'Bearer not-a-token';
  const tls = new Agent({ connect: { rejectUnauthorized: false } });

  beforeAll(async () => {
    app = await startTestApp();
    await app.createOrder('dup-auth');
    good = app.authHeaders.authorization;
  });
  afterAll(async () => {
    await tls.close();
    await app.close();
  });

  async function h1(base: string, method: string, path: string, values: string[]) {
    const res = await request(`${base}/v1/orders/dup-auth${path}`, {
      method,
      headers: {
        authorization: values,
        ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
      },
      ...(method === 'POST' ? { body: JSON.stringify({ status: 'paid' }) } : {}),
      dispatcher: base.startsWith('https') ? tls : undefined,
    });
    // An accepted SSE request is a stream that does not end: its status is the answer.
    if (res.statusCode === 200) {
      res.body.destroy();
      return { status: res.statusCode, text: '' };
    }
    return { status: res.statusCode, text: await res.body.text() };
  }

  it.each(ROUTES)('%s over HTTP/1.1 and HTTP/1.1 over TLS: 400', async (_what, method, path) => {
    for (const base of [app.httpUrl, app.httpsUrl]) {
      for (const values of [
        [good, bad],
        [bad, good],
        [good, good],
      ]) {
        const res = await h1(base, method, path, values);
        expect([base, res.status]).toEqual([base, 400]);
        expect((JSON.parse(res.text) as ErrorBody).error.code).toBe(ErrorCode.InvalidArgument);
      }
    }
  });

  it.each(ROUTES)('%s over HTTP/2: 400', async (_what, method, path) => {
    const socket = tlsConnect({
      host: '127.0.0.1',
      port: app.ports.https,
      ALPNProtocols: ['h2'],
      rejectUnauthorized: false,
    });
    await once(socket, 'secureConnect');
    const connection = new RawH2Connection(socket);
    try {
      const body = method === 'POST' ? Buffer.from(JSON.stringify({ status: 'paid' })) : undefined;
      const block = Buffer.concat([
        literalBlock({
          ':method': method,
          ':scheme': 'https',
          ':authority': `127.0.0.1:${app.ports.https}`,
          ':path': `/v1/orders/dup-auth${path}`,
          authorization: good,
          ...(body ? { 'content-type': 'application/json' } : {}),
        }),
        literalBlock({ authorization: bad }),
      ]);
      const status = await new Promise<string | undefined>((resolve, reject) => {
        connection.request(block, body, {
          onHeaders: (fields: H2Fields) => resolve(fields[':status']),
          onData: () => undefined,
          onClosed: (cause) => reject(new Error(`stream closed: ${cause.kind}`)),
        });
      });
      expect(status).toBe('400');
    } finally {
      connection.close();
      socket.destroy();
    }
  });

  // Node's HTTP/2 layer keeps the first `authorization` field; grpc-js saw only that one.
  it.each(['GetOrder', 'Subscribe'])('gRPC %s: INVALID_ARGUMENT', async (method) => {
    const socket = tcpConnect(app.ports.grpc, '127.0.0.1');
    await once(socket, 'connect');
    const connection = new RawH2Connection(socket);
    try {
      const block = Buffer.concat([
        literalBlock({
          ':method': 'POST',
          ':scheme': 'http',
          ':authority': app.grpcAddress,
          ':path': `/orderstatus.v1.OrderStatusService/${method}`,
          'content-type': 'application/grpc',
          te: 'trailers',
          authorization: good,
        }),
        literalBlock({ authorization: bad }),
      ]);
      // GetOrderRequest / SubscribeRequest { order_id: "dup-auth" }.
      const body = framedMessage(Buffer.from('0a086475702d61757468', 'hex'));
      const status = await new Promise<string | undefined>((resolve, reject) => {
        connection.request(block, body, {
          onHeaders: (fields: H2Fields) => {
            if (fields['grpc-status'] !== undefined) resolve(fields['grpc-status']);
          },
          onData: () => undefined,
          onClosed: (cause) => reject(new Error(`stream closed: ${cause.kind}`)),
        });
      });
      expect(Number(status)).toBe(GrpcCode.INVALID_ARGUMENT);
    } finally {
      connection.close();
      socket.destroy();
    }
  });

  it('a socket.io handshake with two Authorization headers is refused', async () => {
    const socket = io(`${app.httpUrl}/orders`, {
      transports: ['websocket'],
      reconnection: false,
      extraHeaders: { authorization: [good, bad] as unknown as string },
    });
    try {
      const err = await once<Error & { data?: { code?: string } }>(socket, 'connect_error');
      expect(err.data?.code).toBe(ErrorCode.InvalidArgument);
    } finally {
      socket.close();
    }
  });
});
