import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import {
  connect as h2Connect,
  constants as h2,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type OutgoingHttpHeaders,
} from 'node:http2';
import { WebSocket, type RawData } from 'ws';
import { ORDERS_NAMESPACE } from '../../../apps/order-status/src/transports/ws/orders-ws.events';
import { DEFAULT_TEST_TOKEN } from '../../support/auth';
import { once, waitFor } from '../../support/wait-for';

/** How long a stalled client may take to connect and see its stream accepted. */
const OPEN_TIMEOUT_MS = 5_000;

/**
 * A client that opened a stream and then stopped reading: the kernel buffers fill and
 * the server's writes stay pending, like a consumer that hung or a peer that vanished
 * without a FIN. `closedByServer` tells whether the server has let go of it.
 */
export interface StalledClient {
  readonly label: string;
  /**
   * Whether the server closed (or reset) this connection or stream within `timeoutMs`.
   * Raw HTTP/1.1 and socket.io clients resume reading to find out (a paused socket
   * never sees the FIN or RST), so call it only once the server's grace is over.
   */
  closedByServer(timeoutMs: number): Promise<boolean>;
  destroy(): void;
}

/**
 * A raw HTTP/1.1 GET (plain TCP or TLS with ALPN http/1.1) whose socket is paused once
 * the response head has arrived. The head must be `200`: the stream was accepted.
 */
export async function stalledHttp1(opts: {
  readonly label: string;
  readonly port: number;
  readonly path: string;
  /** PEM of the TLS port's certificate; plain TCP without it. */
  readonly ca?: string;
  readonly accept?: string;
  readonly token?: string;
}): Promise<StalledClient> {
  const socket: Socket = opts.ca
    ? tlsConnect({
        host: '127.0.0.1',
        port: opts.port,
        ca: opts.ca,
        servername: 'localhost',
        ALPNProtocols: ['http/1.1'],
      })
    : netConnect(opts.port, '127.0.0.1');
  let closed = false;
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  await once(socket, opts.ca ? 'secureConnect' : 'connect', OPEN_TIMEOUT_MS);
  socket.write(
    [
      `GET ${opts.path} HTTP/1.1`,
      `host: 127.0.0.1:${opts.port}`,
      `authorization: Bearer ${opts.token ?? DEFAULT_TEST_TOKEN}`,
      `accept: ${opts.accept ?? 'text/event-stream'}`,
      '',
      '',
    ].join('\r\n'),
  );
  const head = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${opts.label}: no response head`)), 5_000);
    socket.once('data', (chunk: Buffer) => {
      // Stop reading now: from here on nothing is consumed until closedByServer().
      socket.pause();
      clearTimeout(timer);
      resolve(chunk.subarray(0, 200).toString('latin1'));
    });
  });
  if (!head.startsWith('HTTP/1.1 200')) {
    socket.destroy();
    throw new Error(`${opts.label}: expected 200, got ${head.split('\r\n')[0]}`);
  }
  return {
    label: opts.label,
    closedByServer: async (timeoutMs) => {
      socket.on('data', () => undefined);
      socket.resume();
      return waitFor(() => closed, `${opts.label} closed`, timeoutMs, 20).then(
        () => true,
        () => false,
      );
    },
    destroy: () => socket.destroy(),
  };
}

/** An HTTP/2 session to the TLS port (or `http://` for gRPC's cleartext h2). */
export async function h2Session(url: string, ca?: string): Promise<ClientHttp2Session> {
  const session = h2Connect(url, ca ? { ca, servername: 'localhost' } : {});
  session.on('error', () => undefined);
  await once(session, 'connect', OPEN_TIMEOUT_MS);
  return session;
}

/**
 * One HTTP/2 stream that is paused from its first byte: its flow-control window is never
 * given back, so the server's writes stall at the HTTP/2 layer while the session itself
 * stays healthy (PINGs and other streams still work). The response status must be
 * `expectStatus`. It counts as closed when the server resets the stream or drops the
 * session; a stream that merely ended would wait for the unread data forever.
 */
export async function stalledH2Stream(opts: {
  readonly label: string;
  readonly session: ClientHttp2Session;
  readonly headers: OutgoingHttpHeaders;
  readonly body?: Buffer;
  readonly expectStatus?: number;
}): Promise<StalledClient> {
  const stream: ClientHttp2Stream = opts.session.request(opts.headers);
  stream.pause();
  stream.on('error', () => undefined);
  let closed = false;
  stream.on('close', () => (closed = true));
  if (opts.body) stream.end(opts.body);
  else stream.end();
  const headers = await once<Record<string, unknown>>(stream, 'response', OPEN_TIMEOUT_MS);
  const status = Number(headers[':status']);
  if (status !== (opts.expectStatus ?? 200)) {
    stream.close(h2.NGHTTP2_CANCEL);
    throw new Error(`${opts.label}: expected ${opts.expectStatus ?? 200}, got ${status}`);
  }
  return {
    label: opts.label,
    closedByServer: (timeoutMs) => {
      // Reads again, as the raw HTTP/1.1 clients do when asked. A stream the server ended
      // normally (END_STREAM after its last frames) closes only once what this paused
      // stream buffered is read: unread, it stays open on the client's side alone, with
      // the server long done with it (likely what a busy CI host saw, where the server's
      // gauges showed three such streams released; not reproduced here).
      stream.resume();
      return waitFor(() => closed, `${opts.label} closed`, timeoutMs, 20).then(
        () => true,
        () => false,
      );
    },
    destroy: () => stream.close(h2.NGHTTP2_CANCEL),
  };
}

/** The gRPC request headers of `OrderStatusService.Subscribe`. */
export function grpcSubscribeHeaders(token: string = DEFAULT_TEST_TOKEN): OutgoingHttpHeaders {
  return {
    ':method': 'POST',
    ':path': '/orderstatus.v1.OrderStatusService/Subscribe',
    'content-type': 'application/grpc',
    te: 'trailers',
    authorization: `Bearer ${token}`,
  };
}

/**
 * A length-prefixed gRPC message holding `SubscribeRequest { order_id = 1; after_seq = 2 }`,
 * encoded by hand so the raw HTTP/2 client needs no protobuf runtime.
 */
export function grpcSubscribeBody(orderId: string, afterSeq = 0): Buffer {
  const id = Buffer.from(orderId, 'utf8');
  if (id.length > 127 || afterSeq > 127) throw new TypeError('short ids and seqs only');
  const fields = [Buffer.from([0x0a, id.length]), id];
  if (afterSeq > 0) fields.push(Buffer.from([0x10, afterSeq]));
  const message = Buffer.concat(fields);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

const NSP = `${ORDERS_NAMESPACE},`;

/**
 * A socket.io client on the wire protocol (engine.io v4 over `ws`) that subscribes to
 * `orderId`, waits for the ack, then pauses its TCP socket: it answers no more pings and
 * reads nothing, so the server's websocket stays unwritable.
 */
export async function stalledSocketIo(opts: {
  readonly label: string;
  readonly httpUrl: string;
  readonly orderId: string;
  readonly afterSeq?: number;
  readonly token?: string;
}): Promise<StalledClient> {
  const ws = new WebSocket(
    `${opts.httpUrl.replace(/^http/, 'ws')}/socket.io/?EIO=4&transport=websocket`,
  );
  let closed = false;
  ws.on('error', () => undefined);
  ws.on('close', () => (closed = true));
  const acked = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${opts.label}: no ack`)), OPEN_TIMEOUT_MS);
    ws.on('message', (data: RawData) => {
      const frame = (data as Buffer).toString('utf8');
      if (frame.startsWith('0')) {
        ws.send(`40${NSP}${JSON.stringify({ token: opts.token ?? DEFAULT_TEST_TOKEN })}`);
      } else if (frame === '2') {
        ws.send('3');
      } else if (frame.startsWith(`40${NSP}`)) {
        const payload = { orderId: opts.orderId, afterSeq: opts.afterSeq ?? 0 };
        ws.send(`42${NSP}1${JSON.stringify(['subscribe', payload])}`);
      } else if (frame.startsWith(`43${NSP}1`)) {
        clearTimeout(timer);
        resolve(frame.slice(`43${NSP}1`.length));
      }
    });
  });
  const ack = await acked;
  if (!ack.includes('"ok":true')) {
    ws.terminate();
    throw new Error(`${opts.label}: subscribe refused: ${ack}`);
  }
  return pausedWebSocket(opts.label, ws, () => closed);
}

/**
 * A raw WebSocket (`/v1/orders/:id/ws`) paused once its `open` frame arrived (the stream
 * was accepted; the replay follows at once): it never reads the rest, the end frame, or the close frame.
 */
export async function stalledWebSocket(opts: {
  readonly label: string;
  readonly httpUrl: string;
  readonly orderId: string;
  readonly token?: string;
}): Promise<StalledClient> {
  const ws = new WebSocket(
    `${opts.httpUrl.replace(/^http/, 'ws')}/v1/orders/${opts.orderId}/ws?after=0`,
    { headers: { authorization: `Bearer ${opts.token ?? DEFAULT_TEST_TOKEN}` } },
  );
  let closed = false;
  ws.on('error', () => undefined);
  ws.on('close', () => (closed = true));
  const first = await once<RawData>(ws, 'message', OPEN_TIMEOUT_MS).catch(() => undefined);
  if (first === undefined || !(first as Buffer).toString('utf8').startsWith('{"type":"open"')) {
    ws.terminate();
    throw new Error(`${opts.label}: stream refused`);
  }
  return pausedWebSocket(opts.label, ws, () => closed);
}

/**
 * A `ws` client whose stream was accepted, paused from now on. Asking whether the server
 * closed it makes it read again (a paused socket never sees the close).
 */
function pausedWebSocket(label: string, ws: WebSocket, closed: () => boolean): StalledClient {
  ws.pause();
  return {
    label,
    closedByServer: async (timeoutMs) => {
      ws.removeAllListeners('message');
      ws.on('message', () => undefined);
      ws.resume();
      return waitFor(closed, `${label} closed`, timeoutMs, 20).then(
        () => true,
        () => false,
      );
    },
    destroy: () => ws.terminate(),
  };
}
