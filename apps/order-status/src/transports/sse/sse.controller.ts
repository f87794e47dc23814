import { Controller, Get, Headers, Inject, Param, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import {
  checkExpectedDomain,
  EncodeOnce,
  ErrorCode,
  EXPECTED_DOMAIN_PARAM,
  parseOrderId,
  parseSeq,
  StreamEndReason,
  toGatewayError,
  type StreamItemOf,
} from '@app/contracts';
import { StreamEventBus, type DeliverySink } from '@app/event-bus';
import { StreamCredentials } from '../../auth/auth.decorators';
import { APP_CONFIG } from '../../config/config.module';
import { httpConnectionPort } from '../../connections/http-connection-port';
import { StreamConnections } from '../../connections/stream-connections.service';
import {
  startStream,
  type ConnectionPort,
  type StreamContext,
} from '../../connections/stream-lifecycle';
import { endHijackedError, hijackedHead, type HeadHeaders } from '../../http/hijacked-reply';
import { LogConnection } from '../../connections/connection-log.guard';
import {
  ApiErrors,
  ApiExpectedDomainQuery,
  ApiOrderIdParam,
  ApiStreamCredentials,
  ORDER_ROUTE_ERRORS,
} from '../../openapi/api-decorators';
import { SSE_STREAM_DESCRIPTION } from '../../openapi/stream-descriptions';
import type { AppConfig } from '../../config/app-config';
import { endFrame, HEARTBEAT_FRAME, retryFrame, sseFrames } from './sse-frames';
import { SseHeartbeat, type HeartbeatEntry } from './sse-heartbeat.service';

/** The part of http.ServerResponse / http2 Http2ServerResponse this controller uses. */
interface RawResponse {
  writeHead(status: number, headers: HeadHeaders): unknown;
  flushHeaders(): void;
  write(chunk: string | Uint8Array): boolean;
  end(chunk?: string): unknown;
  once(event: 'drain', listener: () => void): unknown;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
}

const TRANSPORT = 'sse';

/**
 * `GET /v1/orders/:orderId/stream`: Server-Sent Events over HTTP/1.1 or HTTP/2.
 *
 * Written straight to the raw response rather than through Nest's `@Sse()`: Nest numbers
 * events per connection when a handler gives no id (which breaks Last-Event-ID resume)
 * and keeps writing when `res.write()` returns false. Here every event's id is its seq
 * and the bus pauses while the socket drains.
 */
@Controller('v1/orders')
@ApiTags('streams')
export class SseController {
  /** The frames of the bus's domain, shared by every stream. */
  private readonly frames: EncodeOnce<Buffer, StreamItemOf>;
  /** The bus's domain, which a subscriber may name (`?domain=`). */
  private readonly domainName: string;

  constructor(
    @Inject(StreamConnections) private readonly connections: StreamConnections,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SseHeartbeat) private readonly heartbeat: SseHeartbeat,
    @Inject(StreamEventBus) bus: StreamEventBus,
  ) {
    this.frames = sseFrames(bus.domain);
    this.domainName = bus.domain.name;
  }

  /**
   * Authenticated by HttpAuthGuard with a bearer token, a single-use `?ticket=` or the
   * session cookie (EventSource cannot send headers); every open and every resume is
   * authorized for this order. The stream ends with `token_expired` when the credentials
   * do.
   */
  @Get(':orderId/stream')
  @StreamCredentials()
  @LogConnection()
  @ApiOperation({
    operationId: 'streamOrderEvents',
    summary: "Follow an order's events (Server-Sent Events)",
    description: SSE_STREAM_DESCRIPTION,
  })
  @ApiStreamCredentials()
  @ApiOrderIdParam()
  @ApiQuery({
    name: 'after',
    required: false,
    description:
      'Resume after this seq (0 or absent: from the start of retention). `Last-Event-ID` wins when both are sent.',
    schema: { type: 'integer', minimum: 0, format: 'int64' },
  })
  @ApiExpectedDomainQuery()
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'Sent by EventSource on reconnect: the `id` of the last frame it received.',
    schema: { type: 'string', pattern: '^[0-9]{1,16}$' },
  })
  @ApiOkResponse({
    description: 'An event stream that ends with an `end` frame.',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ApiNoContentResponse({
    description:
      'The order is finished and there is nothing after the resume point: EventSource stops reconnecting.',
  })
  @ApiErrors(...ORDER_ROUTE_ERRORS, ErrorCode.FailedPrecondition, ErrorCode.ResourceExhausted)
  async stream(
    @Param('orderId') rawOrderId: string,
    @Query('after') rawAfter: unknown,
    @Query(EXPECTED_DOMAIN_PARAM) rawDomain: unknown,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    // We own the response from here on (Fastify must not send anything itself).
    reply.hijack();
    const res = reply.raw as unknown as RawResponse;
    const http2 = req.raw.httpVersionMajor === 2;
    const writer = new SseWriter(
      res,
      reply,
      http2,
      this.config.sse.retryMs,
      this.heartbeat,
      httpConnectionPort(reply),
      this.frames,
    );
    try {
      const orderId = parseOrderId(rawOrderId);
      // Last-Event-ID wins: on an automatic reconnect the browser re-sends the original
      // URL (with its old ?after=) plus the id of the last event it saw.
      const afterSeq =
        lastEventId !== undefined
          ? parseSeq(lastEventId, 'Last-Event-ID')
          : parseSeq(rawAfter, 'after');
      checkExpectedDomain(this.domainName, rawDomain);
      // The guard has authenticated the request; a principal is always there.
      const principal = req.principal;
      if (principal === undefined) throw new Error('SSE route reached without a principal');
      const sub = await startStream(
        this.connections.busStream({
          transport: TRANSPORT,
          principal,
          orderId,
          afterSeq,
          port: writer,
          sink: (ctx) => writer.attach(ctx),
        }),
      );
      if (sub !== undefined) writer.sendHead();
    } catch (err) {
      // Not opened: nothing has been written yet, so the typed error is the answer.
      const gw = toGatewayError(err);
      if (writer.over) return;
      endHijackedError(reply, gw);
    }
  }
}

/**
 * One SSE response: the head on first use, frames while the stream is open, the end
 * frame once. Never writes after the end or after the client left (a write then would
 * emit ERR_STREAM_WRITE_AFTER_END on the response), and takes itself off the heartbeat
 * as soon as the connection is released.
 *
 * One object is the stream's sink, its heartbeat entry and its connection port (the
 * response's, plus leaving the heartbeat on release): an idle stream keeps all of them
 * for its whole life, and methods cost it nothing where closures would.
 */
class SseWriter implements DeliverySink, ConnectionPort, HeartbeatEntry {
  private headSent = false;
  /** The end was written or the client is gone: nothing more goes out. */
  over = false;
  /** Wrote an event since the last heartbeat (see SseHeartbeat). */
  active = false;
  private beating = false;
  private ctx: StreamContext | undefined;

  constructor(
    private readonly res: RawResponse,
    private readonly reply: FastifyReply,
    private readonly http2: boolean,
    private readonly retryMs: number,
    private readonly heartbeat: SseHeartbeat,
    private readonly port: ConnectionPort,
    private readonly frames: EncodeOnce<Buffer, StreamItemOf>,
  ) {}

  /** The connection's context: writes stop once it is closed. */
  attach(ctx: StreamContext): DeliverySink {
    this.ctx = ctx;
    return this;
  }

  watchGone(onGone: () => void): void {
    this.port.watchGone(onGone);
  }

  /** The lifecycle lets go of the connection (client gone, stream over, shutdown). */
  unwatchGone(onGone: () => void): void {
    this.port.unwatchGone(onGone);
    this.leaveHeartbeat();
  }

  destroy(): void {
    this.port.destroy();
  }

  write(item: StreamItemOf): boolean {
    if (this.over || this.ctx?.closed !== false) return false;
    this.sendHead();
    // This stream needs no heartbeat this period.
    this.active = true;
    return this.res.write(this.frames.get(item));
  }

  onDrain(resume: () => void): void {
    this.res.once('drain', resume);
  }

  end(reason: StreamEndReason, retryAfterMs?: number): void {
    if (!this.over && this.ctx?.closed === false) this.finish(reason, retryAfterMs);
    this.over = true;
    this.leaveHeartbeat();
    this.ctx?.ended();
  }

  beat(): void {
    this.res.write(HEARTBEAT_FRAME);
  }

  sendHead(): void {
    if (this.headSent || this.over) return;
    this.headSent = true;
    this.res.writeHead(
      200,
      hijackedHead(this.reply, {
        'content-type': 'text/event-stream; charset=utf-8',
        // no-store: an intermediary must never replay a stream from cache.
        'cache-control': 'no-store',
        // nginx buffers proxied responses by default, which would hold events back.
        'x-accel-buffering': 'no',
        // Connection-specific headers are forbidden in HTTP/2 (RFC 9113 section 8.2.2).
        ...(this.http2 ? {} : { connection: 'keep-alive' }),
      }),
    );
    // The head goes out on its own: HTTP/1.1 responses keep their head string for their
    // whole life, and sent alone it is flattened to one string instead of a rope of pieces.
    this.res.flushHeaders();
    this.res.write(retryFrame(this.retryMs));
    this.heartbeat.add(this);
    this.beating = true;
  }

  private finish(reason: StreamEndReason, retryAfterMs?: number): void {
    if (!this.headSent && reason === StreamEndReason.Completed) {
      // Resuming a finished order: 204 tells EventSource to stop reconnecting.
      this.over = true;
      this.res.writeHead(204, hijackedHead(this.reply, { 'cache-control': 'no-store' }));
    } else {
      this.sendHead();
      // Shutdown advice: EventSource waits this (per-client random) delay before it
      // reconnects, so a restart does not bring every client back at once.
      if (retryAfterMs !== undefined) this.res.write(retryFrame(retryAfterMs));
      this.res.write(endFrame(reason, retryAfterMs));
    }
    this.res.end();
  }

  private leaveHeartbeat(): void {
    if (!this.beating) return;
    this.beating = false;
    this.heartbeat.delete(this);
  }
}
