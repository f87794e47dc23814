import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { rawSocket, type AttackTarget } from './attack';

/** The service's socket.io namespace (a wire constant, like the routes). */
const NSP = '/orders';
export const JOIN_TIMEOUT_MS = 5_000;

/**
 * One client WebSocket frame (RFC 6455 §5.2): FIN + text, masked with a zero key (a
 * legal mask that leaves the payload as it is, so a 5 MB frame costs no copy).
 */
export function textFrame(payload: string): Buffer {
  const body = Buffer.from(payload);
  const n = body.length;
  const head =
    n < 126
      ? Buffer.from([0x81, 0x80 | n])
      : n < 65_536
        ? Buffer.from([0x81, 0x80 | 126, n >> 8, n & 0xff])
        : Buffer.concat([Buffer.from([0x81, 0x80 | 127]), u64(n)]);
  return Buffer.concat([head, Buffer.alloc(4), body]);
}

function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

/**
 * socket.io over a WebSocket written by hand on a raw socket (engine.io v4 packets:
 * `40/orders,{auth}` joins the namespace, `42/orders,id[event,args]` emits with an ack):
 * what socket.io-client cannot do, stop reading the socket while the server writes.
 * Resolves with the socket once the namespace is joined, or undefined after a bound.
 */
export function joinRawSocketIo(
  t: AttackTarget,
  onError: (code: string) => void,
): Promise<Socket | undefined> {
  const s = rawSocket(t, false, onError);
  s.setNoDelay(true);
  s.write(
    'GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\n' +
      `Host: ${t.service.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  return new Promise((resolve) => {
    let seen = '';
    let upgraded = false;
    const timer = setTimeout(() => done(undefined), JOIN_TIMEOUT_MS);
    const done = (v: Socket | undefined) => {
      clearTimeout(timer);
      s.removeAllListeners('data');
      if (v === undefined) s.destroy();
      resolve(v);
    };
    s.on('close', () => done(undefined));
    s.on('data', (chunk: Buffer) => {
      seen += chunk.toString('latin1');
      if (!upgraded && seen.includes('\r\n\r\n')) {
        if (!seen.startsWith('HTTP/1.1 101')) return done(undefined);
        upgraded = true;
        s.write(textFrame(`40${NSP},${JSON.stringify({ token: t.token })}`));
      }
      if (upgraded && seen.includes(`40${NSP},{"sid"`)) done(s);
    });
  });
}

/** `subscribe` with ack id 1, as the service's gateway expects it. */
export function subscribeFrame(orderId: string, afterSeq = 0): Buffer {
  return textFrame(`42${NSP},1${JSON.stringify(['subscribe', { orderId, afterSeq }])}`);
}
