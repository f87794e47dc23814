import { Body, Controller, Headers, HttpCode, Inject, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiBody, ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scope, type Principal } from '@app/auth';
import { ErrorCode } from '@app/contracts';
import { PublishTrackingDto, type TrackingUpdated } from '@app/order-domain';
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

/**
 * Tracking updates over REST (gRPC: `UpdateTracking`): progress of an order that does not
 * change its status, published on the order's seq sequence like a status change.
 */
@Controller('v1/orders')
@ApiTags('orders')
@ApiBearer()
@ApiOrderIdParam()
export class TrackingController {
  constructor(@Inject(OrderPublisher) private readonly publisher: OrderPublisher) {}

  /**
   * Publishes a tracking update; 201 with the event and its seq. Same scope
   * (`orders:write`), rate limit and `Idempotency-Key` handling as a status change. 409
   * unless the order is shipped or out for delivery, 404 for an unknown order.
   */
  @Post(':orderId/tracking')
  @HttpCode(201)
  @RequireScopes(Scope.OrdersWrite)
  @ApiOperation({
    operationId: 'publishTracking',
    summary: 'Publish a tracking update (location, ETA)',
    description:
      "Needs `orders:write`. Progress that does not change the status, on the order's seq sequence: 201 with the event and its seq. Accepted while the order is `shipped` or `out_for_delivery` (409 otherwise). Same rate limit and `Idempotency-Key` handling as a status change.",
  })
  @ApiIdempotencyKey()
  @ApiBody({ type: Schema.PublishTrackingBody })
  @ApiCreatedResponse({ type: Schema.TrackingUpdated, headers: IDEMPOTENT_REPLAYED_HEADER })
  @ApiErrors(...ORDER_ROUTE_ERRORS, ErrorCode.FailedPrecondition, ErrorCode.ResourceExhausted)
  @ApiJsonBodyErrors()
  async publish(
    @Param('orderId', OrderIdPipe) orderId: string,
    @Body() body: PublishTrackingDto,
    @Headers(IDEMPOTENCY_KEY_HEADER) rawIdempotencyKey: string | undefined,
    @CurrentPrincipal() principal: Principal,
    @RestPublishOrigin() origin: PublishOrigin,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TrackingUpdated> {
    const event = await this.publisher.publishTracking(
      { principal, rawKey: rawIdempotencyKey, keyField: 'Idempotency-Key', origin },
      { orderId, location: body.location, etaMs: body.etaMs },
    );
    return answerPublish(reply, event);
  }
}
