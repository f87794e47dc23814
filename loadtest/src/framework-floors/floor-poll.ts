import { holdPoll, MAX_WAIT_S, pollBody } from '../bare-server/bare-api';
import type { OrderLog } from '../bare-server/order-log';

/** What floorPoll uses of Fastify's reply (on either server type: h1 or h2 compat). */
export interface PollReply {
  code(status: number): unknown;
  readonly raw: { once(event: 'close', listener: () => void): unknown };
}

/**
 * Both floors' long-poll handler body, as a handler of either framework returns it: a
 * promise of the answer (what follows `after`), or of nothing with status 204 when `wait`
 * passes; the hold is dropped when the client leaves. Both frameworks hand the handler
 * Fastify's reply, so the floors differ only in how the request reaches this.
 */
export function floorPoll(
  log: OrderLog,
  reply: PollReply,
  orderId: string,
  after: string | undefined,
  wait: string | undefined,
): Promise<object | undefined> {
  const afterSeq = Number(after ?? 0);
  return new Promise((resolve) => {
    const cancel = holdPoll(log, orderId, afterSeq, Number(wait ?? MAX_WAIT_S), (events) => {
      if (events !== undefined) return resolve(pollBody(orderId, afterSeq, events));
      void reply.code(204);
      resolve(undefined);
    });
    reply.raw.once('close', cancel);
  });
}
