import type { FastifyReply } from 'fastify';
import type { OrderEvent } from '@app/order-domain';
import { isReplay } from '@app/store';

/** draft-ietf-httpapi-idempotency-key-header; Node lower-cases incoming header names. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** Marks an answer replayed from an earlier request with the same key (Stripe's name). */
export const REPLAYED_HEADER = 'idempotent-replayed';

/** The REST answer to a publish: a replay says so in its header, with the same 201. */
export function answerPublish<E extends OrderEvent>(reply: FastifyReply, event: E): E {
  if (isReplay(event)) void reply.header(REPLAYED_HEADER, 'true');
  return event;
}
