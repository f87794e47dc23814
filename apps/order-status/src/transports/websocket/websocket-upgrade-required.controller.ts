import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, ErrorCode, GatewayError } from '@app/contracts';
import { Public } from '../../auth/auth.decorators';
import { ApiOrderIdParam, ApiPublic } from '../../openapi/api-decorators';
import { ErrorBody } from '../../openapi/api-schemas';

/** RFC 9110 section 15.5.22: the protocol a client must switch to for this route. */
const UPGRADE_REQUIRED = 426;

/**
 * `GET /v1/orders/:orderId/ws` without `Upgrade: websocket` (a browser tab, curl, a proxy
 * that dropped the hop-by-hop headers): 426 and a typed error instead of a bare 404, so
 * the client learns the route exists and what it takes. Upgrades never reach Fastify
 * (Node emits them as `upgrade` events, which WebSocketUpgrades answers). Public: the
 * upgrade itself authenticates, and this answer reveals nothing about an order.
 * The OpenAPI document describes both answers; the frames are the AsyncAPI document's.
 */
@Controller('v1/orders')
@ApiTags('streams')
export class WebSocketUpgradeRequiredController {
  @Public()
  @Get(':orderId/ws')
  @ApiOperation({
    operationId: 'openOrderWebSocket',
    summary: "Follow an order's events (raw WebSocket, RFC 6455)",
    description:
      'A WebSocket route: only a `GET` with `Upgrade: websocket` over HTTP/1.1 opens the ' +
      'stream (101); its frames, close codes and resume (`?after=`) are described by the ' +
      'AsyncAPI document (docs/asyncapi.yaml, channel `websocketOrderStream`). The upgrade ' +
      'authenticates like the SSE route (bearer header, single-use `?ticket=`, or the session ' +
      'cookie) and refuses a foreign `Origin` with 403; refusals after it are close frames. ' +
      'Any other `GET` is answered 426, without looking at credentials or the order.',
  })
  @ApiPublic()
  @ApiOrderIdParam()
  @ApiQuery({
    name: 'after',
    required: false,
    description: 'Resume point of the upgrade: the stream starts after this seq.',
    schema: { type: 'integer', minimum: 0 },
  })
  @ApiResponse({
    status: 101,
    description: 'Switching Protocols: the WebSocket stream (see docs/asyncapi.yaml).',
  })
  @ApiResponse({
    status: UPGRADE_REQUIRED,
    description:
      '`failed_precondition`: a plain `GET` (no `Upgrade: websocket`, or over HTTP/2, where ' +
      'WebSocket is not offered). Over HTTP/1.1 it carries `Upgrade: websocket`.',
    type: ErrorBody,
  })
  upgradeRequired(@Req() req: FastifyRequest, @Res() reply: FastifyReply): void {
    const err = new GatewayError(
      ErrorCode.FailedPrecondition,
      'this route takes a WebSocket upgrade over HTTP/1.1 (Upgrade: websocket)',
    );
    // RFC 9110 section 15.5.22 requires the Upgrade header, which HTTP/2 forbids
    // (RFC 9113 section 8.2.2; Node throws on it), and WebSocket over HTTP/2 is not offered.
    if (req.raw.httpVersionMajor < 2) {
      void reply.header('upgrade', 'websocket').header('connection', 'upgrade');
    }
    void reply.status(UPGRADE_REQUIRED).send(errorBody(err));
  }
}
