import { connect as h2connect, type IncomingHttpHeaders } from 'node:http2';
import { bearer, rawSocket, Tally, type Attack, type AttackTarget } from './attack';
import { grpcHeaders, subscribeMessage } from '../clients/grpc-frame';
import { joinRawSocketIo, textFrame } from './raw-socketio';

/** Bigger than every limit the service sets (socket.io buffer, gRPC message, URL, headers). */
const HUGE_BYTES = 8 * 1024 * 1024;
const URL_BYTES = 64 * 1024;
const HEADER_BYTES = 256 * 1024;
const ANSWER_TIMEOUT_MS = 5_000;

/** The first status line (or `closed` / `timeout`) a raw HTTP/1.1 request gets back. */
function rawAnswer(t: AttackTarget, head: string, tally: Tally): Promise<string> {
  return new Promise((resolve) => {
    const s = rawSocket(t, false, (code) => tally.add(`error_${code}`));
    let text = '';
    const done = (v: string) => {
      clearTimeout(timer);
      s.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done('timeout'), ANSWER_TIMEOUT_MS);
    s.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      const line = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (line) done(line[1]);
    });
    s.on('close', () => done('closed'));
    s.write(head);
  });
}

/**
 * Oversized input on every entry: a socket.io packet far above the buffer limit, a gRPC
 * request message above the maximum size, a 64 KB URL and a 256 KB header. Each must be
 * refused (a status, a closed connection, RESOURCE_EXHAUSTED) without the service
 * buffering it whole or falling over; the report counts the outcomes.
 */
export function oversized(t: AttackTarget, rounds: number): Attack {
  const tally = new Tally();
  let done: Promise<void> = Promise.resolve();
  let stopped = false;

  const socketIo = async () => {
    const s = await joinRawSocketIo(t, (code) => tally.add(`error_${code}`));
    if (s === undefined) return tally.add('ws_join_failed');
    const closed = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ANSWER_TIMEOUT_MS);
      s.once('close', () => (clearTimeout(timer), resolve(true)));
    });
    s.resume();
    s.write(
      textFrame(`42/orders,1${JSON.stringify(['subscribe', { orderId: 'x'.repeat(HUGE_BYTES) }])}`),
    );
    tally.add((await closed) ? 'ws_closed' : 'ws_not_closed');
    s.destroy();
  };

  const grpc = () =>
    new Promise<void>((resolve) => {
      const session = h2connect(`http://${t.service.host}:${t.service.grpcPort}`);
      session.on('error', () => undefined);
      const finish = (outcome: string) => {
        clearTimeout(timer);
        tally.add(`grpc_${outcome}`);
        session.destroy();
        resolve();
      };
      const timer = setTimeout(() => finish('timeout'), ANSWER_TIMEOUT_MS);
      const req = session.request(grpcHeaders(t.token), { endStream: false });
      let status = 'closed';
      req.on('response', (h) => {
        if (h['grpc-status'] !== undefined) status = `status${String(h['grpc-status'])}`;
      });
      req.on('trailers', (h: IncomingHttpHeaders) => {
        status = `status${String(h['grpc-status'])}`;
      });
      req.on('error', () => undefined);
      req.on('close', () => finish(status));
      req.resume();
      req.end(subscribeMessage('x'.repeat(HUGE_BYTES)));
    });

  const http = async () => {
    const id = 'x'.repeat(URL_BYTES);
    tally.add(
      `url_${await rawAnswer(t, `GET /v1/orders/${id}/stream HTTP/1.1\r\nHost: x\r\n${bearer(t.token)}\r\n`, tally)}`,
    );
    tally.add(
      `header_${await rawAnswer(t, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'y'.repeat(HEADER_BYTES)}\r\n\r\n`, tally)}`,
    );
  };

  return {
    name: 'oversized',
    start() {
      done = (async () => {
        for (let i = 0; i < rounds && !stopped; i++)
          await Promise.all([socketIo(), grpc(), http()]);
      })().catch(() => tally.add('error_round'));
    },
    async stop() {
      stopped = true;
      await done;
      return tally.toJSON('oversized_');
    },
  };
}
