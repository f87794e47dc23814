import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ownerForNewOrder, Scope, type Principal } from '@app/auth';
import { publishPayload, type PayloadEvent, type PayloadSnapshot } from '@app/payload-domain';
import { isReplay, StreamStore } from '@app/store';
import { CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { OrderIdPipe } from '../orders/order-id.pipe';
import { OrderPublisher } from '../orders/order-publisher';
import { IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER } from '../orders/publish-headers';
import { RestPublishOrigin, type PublishOrigin } from '../tracing/trace-headers';
import { PublishPayloadDto } from './publish-payload.dto';

/**
 * The payload domain's publish route, mounted instead of the order routes when the
 * service carries the payload domain (STREAM_DOMAIN=payload, a benchmark setting): the
 * same checks and spans as an order publish (`orders:write`, rate limit,
 * `Idempotency-Key`, the owner of a new stream, the caller's `traceparent`). Left out of the API documents: it is not the product's API.
 */
@Controller('v1/streams')
@ApiExcludeController()
export class PayloadController {
  constructor(
    @Inject(OrderPublisher) private readonly publisher: OrderPublisher,
    @Inject(StreamStore) private readonly store: StreamStore<PayloadEvent, PayloadSnapshot>,
  ) {}

  /** The stream's position (its owner's, or `orders:read:any`): how a run reads its last seq. */
  @Get(':orderId')
  async snapshot(
    @Param('orderId', OrderIdPipe) orderId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<PayloadSnapshot> {
    return this.publisher.snapshot(principal, orderId, 'http');
  }

  /** Publishes `bytes` of payload on the stream (its first publish creates it); 201. */
  @Post(':orderId/payload')
  @HttpCode(201)
  @RequireScopes(Scope.OrdersWrite)
  async publish(
    @Param('orderId', OrderIdPipe) orderId: string,
    @Body() body: PublishPayloadDto,
    @Headers(IDEMPOTENCY_KEY_HEADER) rawIdempotencyKey: string | undefined,
    @CurrentPrincipal() principal: Principal,
    @RestPublishOrigin() origin: PublishOrigin,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PayloadEvent> {
    const caller = { principal, rawKey: rawIdempotencyKey, keyField: 'Idempotency-Key', origin };
    const event = await this.publisher.publish(caller, { orderId, kind: 'payload' }, (options) =>
      publishPayload(this.store, {
        orderId,
        bytes: body.bytes,
        ownerId: ownerForNewOrder(principal, undefined),
        ...options,
      }),
    );
    if (isReplay(event)) void reply.header(REPLAYED_HEADER, 'true');
    return event;
  }
}
