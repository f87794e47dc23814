import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { bearer, rawSocket, Tally, type Attack, type AttackTarget } from './attack';
import { grpcHeaders, subscribeMessage } from '../clients/grpc-frame';
import { joinRawSocketIo, subscribeFrame } from './raw-socketio';

/** The long-poll hold the stalled long-polls ask for (the service caps it). */
const LONG_POLL_WAIT_S = 25;

/**
 * Clients that subscribe to a busy, heavily padded order and then never read: on every
 * transport (raw HTTP/1.1 over TCP and TLS for SSE and long-poll, HTTP/2 streams that are
 * paused so their flow-control window fills, gRPC the same way, socket.io over a raw
 * WebSocket whose socket is paused). The service must bound what it buffers for them,
 * end their streams when their time comes without writing after the end, and never
 * let them cost the canaries anything.
 */
export function stalledReaders(t: AttackTarget, perTransport: number): Attack {
  const tally = new Tally();
  const sockets: Socket[] = [];
  const sessions: ClientHttp2Session[] = [];
  const onError = (code: string) => tally.add(`error_${code}`);
  const sse = `/v1/orders/${encodeURIComponent(t.paddedOrderId)}/stream`;
  const poll = `/v1/orders/${encodeURIComponent(t.paddedOrderId)}/events?after=0&wait=${LONG_POLL_WAIT_S}`;

  const rawGet = (tls: boolean, path: string, accept: string) => {
    const s = rawSocket(t, tls, onError);
    s.pause(); // never read: the kernel buffers fill, then the server's writes back up
    s.write(
      `GET ${path} HTTP/1.1\r\nHost: ${t.service.host}\r\n${bearer(t.token)}accept: ${accept}\r\n\r\n`,
    );
    sockets.push(s);
  };
  const h2 = (url: string, headers: Record<string, string>, body?: Buffer) => {
    const session = h2connect(url, { rejectUnauthorized: false });
    session.on('error', (err: NodeJS.ErrnoException) => onError(err.code ?? 'error'));
    sessions.push(session);
    const req = session.request(headers, { endStream: body === undefined });
    req.on('error', (err: NodeJS.ErrnoException) => onError(err.code ?? 'error'));
    if (body !== undefined) req.end(body);
    req.pause(); // the stream's window is never given back
  };

  return {
    name: 'stalled',
    start() {
      const https = `https://${t.service.host}:${t.service.httpsPort}`;
      const auth: Record<string, string> =
        t.token === undefined ? {} : { authorization: `Bearer ${t.token}` };
      for (let i = 0; i < perTransport; i++) {
        rawGet(false, sse, 'text/event-stream');
        rawGet(true, sse, 'text/event-stream');
        rawGet(false, poll, 'application/json');
        h2(https, { ':path': sse, accept: 'text/event-stream', ...auth });
        h2(https, { ':path': poll, ...auth });
        h2(
          `http://${t.service.host}:${t.service.grpcPort}`,
          grpcHeaders(t.token),
          subscribeMessage(t.paddedOrderId),
        );
        tally.add('opened', 6);
        void joinRawSocketIo(t, onError).then((s) => {
          if (s === undefined) return tally.add('ws_join_failed');
          s.write(subscribeFrame(t.paddedOrderId));
          s.pause();
          sockets.push(s);
          tally.add('opened');
        });
      }
    },
    async stop() {
      for (const s of sockets) s.destroy();
      for (const s of sessions) s.destroy();
      return tally.toJSON('stalled_');
    },
  };
}
