import { Controller, Get, Inject, Param, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ErrorCode, GatewayError, parseOrderId, parseSeq } from '@app/contracts';
import { OrderEventBus, openPoll, type PollHold } from '@app/event-bus';
import { AuthService } from '../../auth/auth.service';
import { APP_CONFIG } from '../../config/config.module';
import { onClientGone } from '../../http/client-gone';
import { LogConnection } from '../../ops/connection-log.guard';
import type { AppConfig } from '../../config/app-config';
import { answer } from './poll-answer';

const TRANSPORT = 'long-poll';

/**
 * `GET /v1/orders/:orderId/events?after=&wait=`: long-poll (and, with wait=0, the
 * short-poll baseline). Answers 200 as soon as anything after `after` exists, 204 when
 * `wait` seconds pass with nothing new. The hold is a normal bus subscription, released
 * the moment the client goes away.
 */
@Controller('v1/orders')
export class LongPollController {
  constructor(
    @Inject(OrderEventBus) private readonly bus: OrderEventBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(AuthService) private readonly auth: AuthService,
  ) {}

  @Get(':orderId/events')
  @LogConnection()
  async poll(
    @Param('orderId') rawOrderId: string,
    @Query('after') rawAfter: unknown,
    @Query('wait') rawWait: unknown,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const orderId = parseOrderId(rawOrderId);
    const after = parseSeq(rawAfter, 'after');
    const waitS = this.waitSeconds(rawWait);
    // Authenticated by HttpAuthGuard (bearer token); every poll is authorized for the order.
    const principal = reply.request.principal;
    if (principal === undefined) throw new Error('long-poll route reached without a principal');
    await this.auth.authorizeRead(principal, orderId);
    // A held request counts as an open connection of the principal while it waits.
    const releaseSlot = this.auth.acquireConnection(principal);
    // Never hold past the token's expiry: the next poll must present a valid token.
    const waitMs = Math.max(0, Math.min(waitS * 1000, principal.expiresAtMs - Date.now()));

    let hold: PollHold | undefined;
    let gone = false;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      releaseSlot();
      stopWatching();
      this.bus.stats.connectionClosed(TRANSPORT);
    };
    const stopWatching = onClientGone(reply, () => {
      gone = true;
      hold?.cancel();
      release();
    });
    this.bus.stats.connectionOpened(TRANSPORT);
    try {
      // Returns once the subscription is open; this handler then returns too, and the
      // answer is written from the callback. Awaiting the answer here instead would keep
      // this function, Nest's handler chain and their promises suspended for the whole
      // hold: about a third of a held long-poll's memory (load test, idle scenario).
      hold = await openPoll(
        this.bus,
        orderId,
        after,
        { waitMs, maxBatch: this.config.longPoll.maxBatch, transport: TRANSPORT },
        (result) => {
          release();
          if (!gone) answer(reply, orderId, after, result);
        },
      );
    } catch (err) {
      // Not open (unknown order, store down): Nest's filter answers with the typed error.
      release();
      throw err;
    }
    // From here on the answer is ours to write (answer() below). Hijacked, the reply also
    // counts as sent for Nest, which otherwise awaits a @Res() handler's reply until the
    // response ends: two suspended async frames and end-of-stream listeners per hold.
    reply.hijack();
    if (gone) hold.cancel();
  }

  /** `wait` in whole seconds, default and cap from config; 0 is the short-poll baseline. */
  private waitSeconds(raw: unknown): number {
    const { defaultWaitS, maxWaitS } = this.config.longPoll;
    if (raw === undefined || raw === '') return defaultWaitS;
    if (typeof raw !== 'string' || !/^\d{1,6}$/.test(raw)) {
      throw new GatewayError(
        ErrorCode.InvalidArgument,
        `wait must be an integer from 0 to ${maxWaitS}`,
      );
    }
    // Capped, not rejected: a client asking for longer simply gets the longest hold.
    return Math.min(Number(raw), maxWaitS);
  }
}
