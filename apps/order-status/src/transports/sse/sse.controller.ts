import { Controller, Get, Headers, Inject, Param, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  errorBody,
  HTTP_STATUS_BY_CODE,
  parseOrderId,
  parseSeq,
  StreamEndReason,
  toGatewayError,
  type StreamItem,
} from '@app/contracts';
import { OrderEventBus, type BusSubscription } from '@app/event-bus';
import { StreamCredentials } from '../../auth/auth.decorators';
import { AuthService } from '../../auth/auth.service';
import { APP_CONFIG } from '../../config/config.module';
import { onClientGone } from '../../http/client-gone';
import { endHijacked, hijackedHead, type HeadHeaders } from '../../http/hijacked-reply';
import { LogConnection } from '../../ops/connection-log.guard';
import type { AppConfig } from '../../config/app-config';
import { endFrame, itemFrame, retryFrame } from './sse-frames';
import { SseHeartbeat, type HeartbeatEntry } from './sse-heartbeat.service';

/** The part of http.ServerResponse / http2 Http2ServerResponse this controller uses. */
interface RawResponse {
  writeHead(status: number, headers: HeadHeaders): unknown;
  write(chunk: string): boolean;
  end(chunk?: string): unknown;
  once(event: 'drain', listener: () => void): unknown;
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
export class SseController {
  constructor(
    @Inject(OrderEventBus) private readonly bus: OrderEventBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SseHeartbeat) private readonly heartbeat: SseHeartbeat,
    @Inject(AuthService) private readonly auth: AuthService,
  ) {}

  /**
   * Authenticated by HttpAuthGuard with a bearer token, a single-use `?ticket=` or the
   * session cookie (EventSource cannot send headers); every open and every resume is
   * authorized for this order. The stream ends with `token_expired` when the credentials
   * do.
   */
  @Get(':orderId/stream')
  @StreamCredentials()
  @LogConnection()
  async stream(
    @Param('orderId') rawOrderId: string,
    @Query('after') rawAfter: unknown,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    // We own the response from here on (Fastify must not send anything itself).
    reply.hijack();
    const res = reply.raw as unknown as RawResponse;
    const http2 = req.raw.httpVersionMajor === 2;
    let sub: BusSubscription | undefined;
    let releaseSlot: (() => void) | undefined;
    let headSent = false;
    let closed = false;
    let beat: HeartbeatEntry | undefined;

    const sendHead = () => {
      if (headSent) return;
      headSent = true;
      res.writeHead(
        200,
        hijackedHead(reply, {
          'content-type': 'text/event-stream; charset=utf-8',
          // no-store: an intermediary must never replay a stream from cache.
          'cache-control': 'no-store',
          // nginx buffers proxied responses by default, which would hold events back.
          'x-accel-buffering': 'no',
          // Connection-specific headers are forbidden in HTTP/2 (RFC 9113 section 8.2.2).
          ...(http2 ? {} : { connection: 'keep-alive' }),
        }),
      );
      res.write(retryFrame(this.config.sse.retryMs));
      beat = this.heartbeat.add(res);
    };
    const finish = (reason: StreamEndReason, retryAfterMs?: number) => {
      if (closed) return;
      if (!headSent && reason === StreamEndReason.Completed) {
        // Resuming a finished order: 204 tells EventSource to stop reconnecting.
        res.writeHead(204, hijackedHead(reply, { 'cache-control': 'no-store' }));
      } else {
        sendHead();
        // Shutdown advice: EventSource waits this (per-client random) delay before it
        // reconnects, so a restart does not bring every client back at once.
        if (retryAfterMs !== undefined) res.write(retryFrame(retryAfterMs));
        res.write(endFrame(reason));
      }
      res.end();
    };

    onClientGone(reply, () => {
      closed = true;
      this.heartbeat.delete(beat);
      sub?.close();
      releaseSlot?.();
      this.bus.stats.connectionClosed(TRANSPORT);
    });
    this.bus.stats.connectionOpened(TRANSPORT);

    try {
      const orderId = parseOrderId(rawOrderId);
      // Last-Event-ID wins: on an automatic reconnect the browser re-sends the original
      // URL (with its old ?after=) plus the id of the last event it saw.
      const afterSeq =
        lastEventId !== undefined
          ? parseSeq(lastEventId, 'Last-Event-ID')
          : parseSeq(rawAfter, 'after');
      // The guard has authenticated the request; a principal is always there.
      const principal = req.principal;
      if (principal === undefined) throw new Error('SSE route reached without a principal');
      await this.auth.authorizeRead(principal, orderId);
      if (closed) return;
      releaseSlot = this.auth.acquireConnection(principal);
      sub = await this.bus.open(
        orderId,
        afterSeq,
        {
          write: (item: StreamItem) => {
            sendHead();
            // This stream needs no heartbeat this period.
            if (beat !== undefined) beat.active = true;
            return res.write(itemFrame(item));
          },
          onDrain: (resume) => res.once('drain', resume),
          end: finish,
        },
        { transport: TRANSPORT, expiresAtMs: principal.expiresAtMs },
      );
      if (closed) sub.close();
      else sendHead();
    } catch (err) {
      const gw = toGatewayError(err);
      if (closed || headSent) {
        res.end();
        return;
      }
      endHijacked(reply, HTTP_STATUS_BY_CODE[gw.code], errorBody(gw));
    }
  }
}
