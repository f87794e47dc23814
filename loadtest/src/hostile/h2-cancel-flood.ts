import { connect as h2connect, constants } from 'node:http2';
import { Tally, type Attack, type AttackTarget } from './attack';

/** Streams opened per HTTP/2 session before the next session (below its stream limit). */
const STREAMS_PER_SESSION = 50;

/**
 * HTTP/2 requests cancelled as soon as they are sent (HEADERS, then RST_STREAM CANCEL:
 * `session.request()` then `req.close()`), on the SSE and the long-poll routes: the
 * service learns of the cancel before, during or after its guard and handler run, and
 * must give back the connection slot and bus subscription each time.
 */
export function h2CancelFlood(t: AttackTarget, total: number): Attack {
  const tally = new Tally();
  let stopped = false;
  let done: Promise<void> = Promise.resolve();
  const id = encodeURIComponent(t.orderId);
  const paths = [`/v1/orders/${id}/stream`, `/v1/orders/${id}/events?after=0&wait=20`];
  const auth = t.token === undefined ? {} : { authorization: `Bearer ${t.token}` };

  const flood = async () => {
    for (let sent = 0; sent < total && !stopped;) {
      const session = h2connect(`https://${t.service.host}:${t.service.httpsPort}`, {
        rejectUnauthorized: false,
      });
      session.on('error', (err: NodeJS.ErrnoException) =>
        tally.add(`error_${err.code ?? 'error'}`),
      );
      const closed = new Promise<void>((resolve) => session.once('close', resolve));
      for (let i = 0; i < STREAMS_PER_SESSION && sent < total; i++, sent++) {
        const req = session.request({ ':path': paths[sent % paths.length], ...auth });
        req.on('error', () => undefined); // the cancel itself
        req.close(constants.NGHTTP2_CANCEL);
        tally.add('cancelled');
      }
      session.close();
      await closed;
    }
  };

  return {
    name: 'h2-cancel',
    start() {
      done = flood().catch(() => tally.add('error_flood'));
    },
    async stop() {
      stopped = true;
      await done;
      return tally.toJSON('h2cancel_');
    },
  };
}
