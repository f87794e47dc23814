import type { FastifyReply } from 'fastify';
import type { Principal } from '@app/auth';
import { parseIdempotencyKey, scopedIdempotencyKey, type OrderEvent } from '@app/contracts';
import { isReplay } from '@app/event-bus';
import type { PublishRateLimiter } from '../auth/publish-rate.limiter';
import { REPLAYED_HEADER } from './publish-headers';

/** What a REST publish adds to its store command: the caller's key, when one was sent. */
export interface IdempotencyPart {
  readonly idempotencyKey?: string;
}

/** The parts of a REST publish request the idempotent flow reads and answers on. */
export interface PublishRequest {
  readonly rawIdempotencyKey: string | undefined;
  readonly principal: Principal;
  readonly reply: FastifyReply;
}

/**
 * The steps every REST publish route takes around its own store call: a malformed key is
 * refused before the caller's publish rate is spent; the key is scoped to the caller, so
 * one caller's key never replays another's publish; a replayed answer carries
 * `Idempotent-Replayed: true` (Stripe's name).
 */
export async function publishIdempotently<E extends OrderEvent>(
  request: PublishRequest,
  publishRate: PublishRateLimiter,
  publish: (idempotency: IdempotencyPart) => Promise<E>,
): Promise<E> {
  const key = parseIdempotencyKey(request.rawIdempotencyKey, 'Idempotency-Key');
  await publishRate.consume(request.principal);
  const event = await publish(
    key === undefined
      ? {}
      : { idempotencyKey: scopedIdempotencyKey(request.principal.subject, key) },
  );
  if (isReplay(event)) void request.reply.header(REPLAYED_HEADER, 'true');
  return event;
}
