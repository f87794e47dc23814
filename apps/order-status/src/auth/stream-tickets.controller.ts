import { Body, Controller, Delete, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Matches } from 'class-validator';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { StreamTicketStore, type Principal } from '@app/auth';
import { ErrorCode, ORDER_ID_PATTERN } from '@app/contracts';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import {
  ApiBearer,
  ApiErrors,
  ApiJsonBodyErrors,
  ORDER_ROUTE_ERRORS,
} from '../openapi/api-decorators';
import * as Schema from '../openapi/app-schemas';
import { CurrentPrincipal } from './auth.decorators';
import { AuthService } from './auth.service';

/** Body of `POST /v1/stream-tickets`. */
export class StreamTicketRequestDto {
  @Matches(ORDER_ID_PATTERN, { message: `orderId must match ${ORDER_ID_PATTERN.source}` })
  orderId!: string;
}

export interface StreamTicketBody {
  readonly ticket: string;
  readonly expiresInS: number;
  /** Ready to give to `new EventSource(...)` (add `&after=<seq>` to resume). */
  readonly streamPath: string;
}

export interface SessionBody {
  readonly subject: string;
  readonly expiresInS: number;
}

/**
 * Credentials for EventSource, which cannot send an Authorization header. Both endpoints
 * take a bearer token (never the cookie: a state-changing POST must not be triggerable
 * cross-site by a cookie alone).
 *
 * - `POST /v1/stream-tickets {orderId}`: a single-use ticket for one order's stream,
 *   valid a few seconds (`AUTH_STREAM_TICKET_TTL_S`), for `...stream?ticket=`, on any
 *   instance when Redis is configured. Never a long-lived token in a URL: URLs land in
 *   logs and histories.
 * - `POST /v1/session`: sets the token as an HttpOnly, SameSite=Strict cookie scoped to
 *   `/v1/`, which EventSource sends (and re-sends on its automatic reconnects) on a
 *   same-origin stream. `DELETE /v1/session` clears it.
 */
@Controller('v1')
@ApiTags('credentials')
@ApiBearer()
export class StreamTicketsController {
  constructor(
    @Inject(StreamTicketStore) private readonly tickets: StreamTicketStore,
    @Inject(AuthService) private readonly auth: AuthService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('stream-tickets')
  @HttpCode(201)
  @ApiOperation({
    operationId: 'createStreamTicket',
    summary: "A single-use ticket for one order's SSE stream",
    description:
      'For `GET /v1/orders/{orderId}/stream?ticket=`: valid for that order only, for AUTH_STREAM_TICKET_TTL_S, once (on any instance when Redis is configured). Needs read access to the order.',
  })
  @ApiBody({ type: Schema.StreamTicketRequestBody })
  @ApiCreatedResponse({ type: Schema.StreamTicketBody })
  @ApiErrors(...ORDER_ROUTE_ERRORS, ErrorCode.ResourceExhausted)
  @ApiJsonBodyErrors()
  async issue(
    @CurrentPrincipal() principal: Principal,
    @Body() body: StreamTicketRequestDto,
  ): Promise<StreamTicketBody> {
    // Checked now as well as when the stream opens: no ticket for someone else's order.
    await this.auth.authorizeRead(principal, body.orderId, 'http');
    const { ticket, expiresAtMs } = await this.tickets.issue(principal, body.orderId);
    return {
      ticket,
      expiresInS: Math.max(0, Math.floor((expiresAtMs - Date.now()) / 1000)),
      streamPath: `/v1/orders/${body.orderId}/stream?ticket=${ticket}`,
    };
  }

  @Post('session')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'startSession',
    summary: 'Set the session cookie EventSource authenticates with',
    description:
      'Sets the bearer token as an HttpOnly, SameSite=Strict cookie scoped to `/v1/`, which EventSource sends on same-origin streams. Only the SSE route accepts it.',
  })
  @ApiOkResponse({
    type: Schema.SessionBody,
    headers: { 'Set-Cookie': { description: 'The session cookie.', schema: { type: 'string' } } },
  })
  @ApiErrors(ErrorCode.Unauthenticated)
  session(
    @CurrentPrincipal() principal: Principal,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): SessionBody {
    const expiresInS = Math.max(0, Math.floor((principal.expiresAtMs - Date.now()) / 1000));
    // The guard verified exactly this header's token.
    const token = (req.headers.authorization ?? '').replace(/^Bearer +/i, '');
    void reply.setCookie(this.config.auth.cookieName, token, {
      httpOnly: true,
      sameSite: 'strict',
      // Secure where the request came over TLS; plain HTTP is for local development.
      secure: req.protocol === 'https',
      path: '/v1/',
      maxAge: expiresInS,
    });
    return { subject: principal.subject, expiresInS };
  }

  @Delete('session')
  @HttpCode(204)
  @ApiOperation({ operationId: 'endSession', summary: 'Clear the session cookie' })
  @ApiNoContentResponse({ description: 'The cookie is cleared.' })
  @ApiErrors(ErrorCode.Unauthenticated)
  endSession(@Res({ passthrough: true }) reply: FastifyReply): void {
    void reply.clearCookie(this.config.auth.cookieName, { path: '/v1/' });
  }
}
