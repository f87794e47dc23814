import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scope, type Principal } from '@app/auth';
import { ErrorCode } from '@app/contracts';
import { PublishStatusDto, type OrderSnapshot, type OrderStatusChanged } from '@app/order-domain';
import { CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import {
  ApiBearer,
  ApiErrors,
  ApiIdempotencyKey,
  ApiJsonBodyErrors,
  ApiOrderIdParam,
  IDEMPOTENT_REPLAYED_HEADER,
  ORDER_ROUTE_ERRORS,
} from '../openapi/api-decorators';
import * as Schema from '../openapi/api-schemas';
import { OrderIdPipe } from './order-id.pipe';
import { OrderPublisher } from './order-publisher';
import { RestPublishOrigin, type PublishOrigin } from '../tracing/trace-headers';
import { answerPublish, IDEMPOTENCY_KEY_HEADER } from './publish-headers';

/** The publish API and the snapshot, over REST. gRPC exposes the same through its unary calls. */
@Controller('v1/orders')
@ApiTags('orders')
@ApiBearer()
@ApiOrderIdParam()
export class OrdersController {
  constructor(@Inject(OrderPublisher) private readonly publisher: OrderPublisher) {}

  /** The order's current state, with its owner; only the owner or `orders:read:any`. */
  @Get(':orderId')
  @ApiOperation({
    operationId: 'getOrder',
    summary: "The order's current state",
    description: 'Needs `orders:read` for your own order, `orders:read:any` for any order.',
  })
  @ApiOkResponse({ type: Schema.OrderSnapshot })
  @ApiErrors(...ORDER_ROUTE_ERRORS)
  async snapshot(
    @Param('orderId', OrderIdPipe) orderId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<OrderSnapshot> {
    return this.publisher.snapshot(principal, orderId, 'http');
  }

  /**
   * Publishes a status change; 201 with the event and its assigned seq. Needs
   * `orders:write`; a new order belongs to `ownerId` when given, else to the caller.
   *
   * With `Idempotency-Key`, a retry of the same request (same caller, order and key,
   * within IDEMPOTENCY_WINDOW_MS) publishes nothing: it answers 201 with the first
   * publish's event and `Idempotent-Replayed: true`, as Stripe's API does, so a client
   * that checks for 201 needs no special case. The key covers the whole body: the same key
   * with any other field is 422 (draft-ietf-httpapi-idempotency-key-header).
   * Without a key, publishing the order's current status again is 409 (failed_precondition):
   * every status change is a real change; progress goes to `POST .../tracking`.
   */
  @Post(':orderId/status')
  @HttpCode(201)
  @RequireScopes(Scope.OrdersWrite)
  @ApiOperation({
    operationId: 'publishStatus',
    summary: 'Publish a status change',
    description:
      'Needs `orders:write`. Answers 201 with the event and its assigned seq. A retry with the same `Idempotency-Key` (same caller and order, within IDEMPOTENCY_WINDOW_MS) publishes nothing and answers 201 with the first event and `Idempotent-Replayed: true`; the same key with another body (any field) is 422.',
  })
  @ApiIdempotencyKey()
  @ApiBody({ type: Schema.PublishStatusBody })
  @ApiCreatedResponse({
    type: Schema.OrderStatusChanged,
    headers: IDEMPOTENT_REPLAYED_HEADER,
  })
  @ApiErrors(...ORDER_ROUTE_ERRORS, ErrorCode.FailedPrecondition, ErrorCode.ResourceExhausted)
  @ApiJsonBodyErrors()
  async publish(
    @Param('orderId', OrderIdPipe) orderId: string,
    @Body() body: PublishStatusDto,
    @Headers(IDEMPOTENCY_KEY_HEADER) rawIdempotencyKey: string | undefined,
    @CurrentPrincipal() principal: Principal,
    @RestPublishOrigin() origin: PublishOrigin,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OrderStatusChanged> {
    const event = await this.publisher.publishStatus(
      { principal, rawKey: rawIdempotencyKey, keyField: 'Idempotency-Key', origin },
      {
        orderId,
        status: body.status,
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
        ...(body.ownerId !== undefined ? { ownerId: body.ownerId } : {}),
      },
    );
    return answerPublish(reply, event);
  }
}
