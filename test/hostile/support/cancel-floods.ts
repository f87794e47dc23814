import { constants as h2, type ClientHttp2Session, type OutgoingHttpHeaders } from 'node:http2';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { connected, type OrdersClient } from '../../ws/orders-client';
import { io } from 'socket.io-client';
import { ORDERS_NAMESPACE } from '../../../apps/order-status/src/transports/ws/orders-ws.events';
import { once } from '../../support/wait-for';

/** Every flood waits this long, at most, for its cancelled streams to be closed on the client. */
const SETTLE_TIMEOUT_MS = 10_000;

/**
 * When a cancel is sent, relative to the request: at once (the server sees HEADERS and
 * RST_STREAM together, before its guard has run), after one event-loop turn (while the
 * guard or the handler awaits), or a few ms later (around registration).
 */
async function cancelPoint(i: number): Promise<void> {
  if (i % 3 === 1) await nextTurn();
  else if (i % 3 === 2) await new Promise((r) => setTimeout(r, i % 7));
}

/**
 * Opens `count` HTTP/2 streams on `session` (HEADERS, then `body` if given) and resets
 * each (RST_STREAM CANCEL) at a `cancelPoint`, one after the other, often before the
 * server has authenticated it; then waits until every one is closed. A GET unless the
 * headers say otherwise.
 *
 * gRPC goes through here too, as raw HTTP/2 rather than grpc-js: grpc-js 1.14's client
 * reports CANCELLED at once when `cancel()` lands while it is still generating the
 * call's metadata, yet goes on to open the HTTP/2 stream and read it (seen with
 * GRPC_TRACE=subchannel_call: no RST_STREAM is ever sent). The server then rightly
 * serves a stream that is open at the HTTP/2 level, so such a flood cannot tell a
 * server leak from a client that never left.
 */
export async function h2OpenAndCancel(
  session: ClientHttp2Session,
  headers: OutgoingHttpHeaders,
  count: number,
  body?: Buffer,
): Promise<void> {
  const closed: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const req = session.request({ ':method': 'GET', ...headers });
    req.on('error', () => undefined);
    // Whatever was answered before the cancel is read and dropped: a client that stops
    // reading is the stalled-reader tests' subject, and unread answers would hold the
    // session's flow-control window (and with it this client's own RST_STREAMs).
    req.resume();
    closed.push(once(req, 'close', SETTLE_TIMEOUT_MS));
    if (body !== undefined) req.end(body);
    await cancelPoint(i);
    req.close(h2.NGHTTP2_CANCEL);
  }
  await Promise.all(closed);
}

/**
 * Connects `count` socket.io clients (in batches of `batch`), each sends `subscribe`
 * and disconnects at once, without waiting for the ack.
 */
export async function socketIoSubscribeAndLeave(
  httpUrl: string,
  token: string,
  orderId: string,
  count: number,
  batch = 10,
): Promise<void> {
  for (let done = 0; done < count; done += batch) {
    const n = Math.min(batch, count - done);
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const socket: OrdersClient = io(`${httpUrl}${ORDERS_NAMESPACE}`, {
          transports: ['websocket'],
          reconnection: false,
          forceNew: true,
          auth: { token },
        });
        try {
          await connected(socket);
          socket.emit('subscribe', { orderId, afterSeq: 0 }, () => undefined);
          await cancelPoint(i);
        } catch {
          // Refused at the handshake (the limit reached): an outcome a flood may meet;
          // the access check afterwards tells whether the refusals were deserved.
        } finally {
          const engine = socket.io.engine;
          const gone = engine.readyState === 'closed' ? undefined : once(engine, 'close');
          socket.disconnect();
          await gone;
        }
      }),
    );
  }
}
