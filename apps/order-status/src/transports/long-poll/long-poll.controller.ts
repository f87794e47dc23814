import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import {
  checkExpectedDomain,
  ErrorCode,
  GatewayError,
  parseOrderId,
  parseSeq,
} from '@app/contracts';
import { StreamEventBus } from '@app/event-bus';
import { openPoll, type PollHold } from './poll';
import { APP_CONFIG } from '../../config/config.module';
import { httpConnectionPort } from '../../connections/http-connection-port';
import { StreamConnections } from '../../connections/stream-connections.service';
import { startStream } from '../../connections/stream-lifecycle';
import { LogConnection } from '../../connections/connection-log.guard';
import {
  ApiBearer,
  ApiErrors,
  ApiExpectedDomainQuery,
  ApiOrderIdParam,
  ORDER_ROUTE_ERRORS,
} from '../../openapi/api-decorators';
import { PollBody } from '../../openapi/app-schemas';
import { LONG_POLL_DESCRIPTION } from '../../openapi/stream-descriptions';
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
@ApiTags('streams')
export class LongPollController {
  constructor(
    @Inject(StreamEventBus) private readonly bus: StreamEventBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(StreamConnections) private readonly connections: StreamConnections,
  ) {}

  @Get(':orderId/events')
  @LogConnection()
  @ApiOperation({
    operationId: 'pollOrderEvents',
    summary: "Wait for an order's next events (long-poll; short-poll with wait=0)",
    description: LONG_POLL_DESCRIPTION,
  })
  @ApiBearer()
  @ApiOrderIdParam()
  @ApiQuery({
    name: 'after',
    required: false,
    description: 'The `next` of the previous answer (0 or absent: from the start of retention).',
    schema: { type: 'integer', minimum: 0, format: 'int64' },
  })
  @ApiQuery({
    name: 'wait',
    required: false,
    description:
      'Seconds to hold the request while nothing is new (default LONG_POLL_DEFAULT_WAIT_S; longer asks are capped at LONG_POLL_MAX_WAIT_S; 0: answer at once).',
    schema: { type: 'integer', minimum: 0 },
  })
  @ApiExpectedDomainQuery()
  @ApiOkResponse({ type: PollBody, description: 'What came after `after`.' })
  @ApiNoContentResponse({
    description:
      'Nothing new within `wait`: poll again with the same `after` (after `Retry-After` seconds when the instance is shutting down).',
    headers: {
      'Retry-After': {
        description: 'Sent while the instance shuts down: seconds to wait before polling again.',
        schema: { type: 'integer', minimum: 1 },
      },
    },
  })
  @ApiErrors(...ORDER_ROUTE_ERRORS, ErrorCode.FailedPrecondition, ErrorCode.ResourceExhausted)
  async poll(@Res() reply: FastifyReply): Promise<void> {
    // Read from the request rather than through @Param/@Query: a poll is a request many
    // times a second per client, and each such parameter runs the global ValidationPipe
    // (an async call and its promises) only to hand back the raw string, which the
    // parsers below check anyway. The route's parameters are documented above.
    const { params, query } = reply.request as FastifyRequest<{
      Params: { orderId?: unknown };
      Querystring: { after?: unknown; wait?: unknown; domain?: unknown };
    }>;
    const orderId = parseOrderId(params.orderId);
    const after = parseSeq(query.after, 'after');
    checkExpectedDomain(this.bus.domain.name, query.domain);
    const waitS = this.waitSeconds(query.wait);
    // Authenticated by HttpAuthGuard (bearer token); every poll is authorized for the order,
    // and a held request counts as an open connection of the principal while it waits.
    const principal = reply.request.principal;
    if (principal === undefined) throw new Error('long-poll route reached without a principal');
    // Never hold past the token's expiry: the next poll must present a valid token.
    const waitMs = Math.max(0, Math.min(waitS * 1000, principal.expiresAtMs - Date.now()));
    const { maxBatch } = this.config.longPoll;

    // Resolves once the subscription is open (rejects, for Nest's filter to answer, when it
    // cannot open); the answer is written from the poll's callback. Awaiting the answer
    // here instead would keep this function, Nest's handler chain and their promises
    // suspended for the whole hold: about a third of a held long-poll's memory (load
    // test, idle scenario).
    await startStream(
      this.connections.forStream<PollHold>({
        transport: TRANSPORT,
        principal,
        orderId,
        port: httpConnectionPort(reply),
        open: (ctx) =>
          openPoll(
            this.bus,
            orderId,
            after,
            { waitMs, maxBatch, transport: TRANSPORT },
            (result) => {
              if (!ctx.closed) answer(this.bus.domain, reply, orderId, after, result);
              ctx.ended();
            },
          ),
      }),
    );
    // From here on the answer is ours to write (answer() above). Hijacked, the reply also
    // counts as sent for Nest, which otherwise awaits a @Res() handler's reply until the
    // response ends: two suspended async frames and end-of-stream listeners per hold.
    reply.hijack();
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
