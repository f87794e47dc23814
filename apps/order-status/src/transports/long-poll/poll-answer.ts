import type { FastifyReply } from 'fastify';
import type { OrderStatusChanged, StreamReset } from '@app/contracts';
import type { PollResult } from '@app/event-bus';
import { endHijacked } from '../../http/hijacked-reply';

/** A 200 answer: what came after `after`, and the cursor to send next time. */
export interface PollBody {
  readonly orderId: string;
  readonly events: OrderStatusChanged[];
  /** Present when the requested cursor could not be served without a gap. */
  readonly reset?: StreamReset;
  /** Send this as `after` on the next request. */
  readonly next: number;
  /** The order is finished: no further events will come. */
  readonly completed: boolean;
}

/**
 * 200 with the batch and the next cursor, or 204 when nothing came within the wait,
 * written on the hijacked reply.
 */
export function answer(
  reply: FastifyReply,
  orderId: string,
  after: number,
  result: PollResult,
): void {
  const { items, completed, retryAfterMs } = result;
  if (items.length === 0 && !completed) {
    // Answered early at shutdown: poll again after the advised (jittered) delay.
    const retryAfter =
      retryAfterMs !== undefined ? { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) } : {};
    endHijacked(reply, 204, undefined, { 'cache-control': 'no-store', ...retryAfter });
    return;
  }
  const events: OrderStatusChanged[] = [];
  let reset: StreamReset | undefined;
  let next = after;
  for (const item of items) {
    if (item.kind === 'event') {
      events.push(item.event);
      next = item.event.seq;
    } else {
      reset = item.reset;
      next = item.reset.snapshot.lastSeq;
    }
  }
  const body: PollBody = { orderId, events, ...(reset ? { reset } : {}), next, completed };
  endHijacked(reply, 200, body, { 'cache-control': 'no-store' });
}
