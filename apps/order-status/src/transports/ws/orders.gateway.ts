import { Inject, Logger } from '@nestjs/common';
import {
  Ack,
  ConnectedSocket,
  MessageBody,
  SubscribeMessage,
  WebSocketGateway,
  type OnGatewayConnection,
  type OnGatewayInit,
} from '@nestjs/websockets';
import type { Namespace } from 'socket.io';
import { assertNotExpired } from '@app/auth';
import {
  ByteBudget,
  checkExpectedDomain,
  errorBody,
  ErrorCode,
  SubscribeDto,
  toGatewayError,
  UnsubscribeDto,
} from '@app/contracts';
import { StreamEventBus, type DeadlineEntry } from '@app/event-bus';
import { AuthService } from '../../auth/auth.service';
import { APP_CONFIG } from '../../config/config.module';
import { ConnectionObserver } from '../../connections/connection-observer';
import { StreamConnections } from '../../connections/stream-connections.service';
import type { AppConfig } from '../../config/app-config';
import { EngineBackpressure } from './engine-backpressure';
import {
  ORDERS_NAMESPACE,
  type ErrorAck,
  type OrdersSocket,
  type SubscribeAck,
  type UnsubscribeAck,
} from './orders-ws.events';
import type { SocketConnection } from './socket-connection';
import { SocketSubscriptions, type SocketBacklog } from './socket-subscriptions';
import { wsAuthMiddleware, type OrdersSocketData } from './ws-auth.middleware';
import { ENGINE_WRITE_BUFFER_HIGH_WATER, WS_SUBSCRIPTIONS_STRUCTURE } from './ws-limits';
import { parsePayload } from './ws-payloads';
import { answerUnknownEvents } from './unknown-events';

/**
 * socket.io namespace `/orders`: `subscribe {orderId, afterSeq}` / `unsubscribe {orderId}`,
 * each answered by an ack; the server emits `status`, `reset` and `end` (see
 * orders-ws.events.ts and docs/routes.md).
 *
 * Handlers never throw: a thrown error would reach Nest's WsExceptionsHandler, which emits
 * an `exception` event the client is not waiting for, and the ack would never come. Every
 * failure, expected or not, becomes an error ack on that socket only.
 *
 * Auth: the handshake middleware (ws-auth.middleware.ts) authenticates `auth.token`
 * before a socket exists; each `subscribe` (first or resume) is authorized for its order
 * (`permission_denied` ack for someone else's); when the token expires every
 * subscription ends with `token_expired` and the socket is disconnected by the server.
 */
@WebSocketGateway({ namespace: ORDERS_NAMESPACE })
export class OrdersGateway implements OnGatewayConnection<OrdersSocket>, OnGatewayInit<Namespace> {
  private readonly logger = new Logger(OrdersGateway.name);
  /** Keyed by socket id, so ops and tests can look at one connection's subscriptions. */
  private readonly sessions = new Map<string, SocketSubscriptions>();
  /** The bytes of every socket's subscriptions together (`order_memory_*`). */
  private readonly subscriptionBytes: ByteBudget;

  constructor(
    @Inject(StreamEventBus) private readonly bus: StreamEventBus,
    @Inject(AuthService) private readonly auth: AuthService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(StreamConnections) private readonly connections: StreamConnections,
    @Inject(ConnectionObserver) observer: ConnectionObserver,
  ) {
    this.subscriptionBytes = new ByteBudget(
      WS_SUBSCRIPTIONS_STRUCTURE,
      config.memory.wsSubscriptionsMaxBytes,
    );
    observer.trackMemory(() => [this.subscriptionBytes.memoryUse]);
  }

  /** Nest guards do not run on connections: authentication is namespace middleware. */
  afterInit(namespace: Namespace): void {
    namespace.use(wsAuthMiddleware(this.auth, this.connections));
  }

  handleConnection(socket: OrdersSocket): void {
    answerUnknownEvents(socket);
    const connection = (socket.data as OrdersSocketData).connection;
    if (connection === undefined) {
      // Only reachable if the middleware was not installed: never serve an anonymous socket.
      this.logger.error(`refusing unauthenticated socket ${socket.id}`);
      socket.disconnect(true);
      return;
    }
    const { principal } = connection;
    let session: SocketSubscriptions;
    let backpressure: EngineBackpressure;
    try {
      backpressure = new EngineBackpressure(socket.conn, ENGINE_WRITE_BUFFER_HIGH_WATER);
      session = new SocketSubscriptions(
        this.bus,
        socket,
        backpressure,
        this.config.limits.subscriptionsPerSocket,
        async (orderId) => {
          assertNotExpired(principal);
          await this.auth.authorizeSubscribe(principal, orderId, 'ws');
        },
        this.subscriptionBytes,
      );
    } catch (err) {
      // Only an incompatible engine.io gets here; refuse the socket rather than stall it.
      this.logger.error(`refusing socket ${socket.id}: ${String(err)}`);
      socket.disconnect(true);
      return;
    }
    this.sessions.set(socket.id, session);
    // The socket must not outlive its credentials: end every stream with `token_expired`
    // (sent before the disconnect packet, in order) and let the client reconnect with a
    // fresh token. A client that no longer reads gets the grace period to take that, then
    // its connection is destroyed. A deadline in the bus's queue, not a timer per socket.
    const expiry = new SocketExpiry(socket, session, connection);
    this.bus.deadlines.schedule(expiry, principal.expiresAtMs);
    // Every subscription of the socket ends with it (client close, ping timeout,
    // maxHttpBufferSize overflow, server shutdown), exactly once, by the life cycle.
    connection.onClose(() => {
      this.bus.deadlines.cancel(expiry);
      this.sessions.delete(socket.id);
      session.close();
      backpressure.close();
    });
  }

  /**
   * Where one socket's backlog sits: packets in the engine's write buffer and items per
   * order in the bus queues (undefined: no such socket). For diagnostics and tests.
   */
  inspect(socketId: string): SocketBacklog | undefined {
    return this.sessions.get(socketId)?.backlog();
  }

  @SubscribeMessage('subscribe')
  async subscribe(
    @ConnectedSocket() socket: OrdersSocket,
    @MessageBody() payload: unknown,
    @Ack() ack: unknown,
  ): Promise<void> {
    const reply = replier<SubscribeAck>(ack);
    try {
      const session = this.session(socket);
      const req = parsePayload(SubscribeDto, 'subscribe', payload);
      checkExpectedDomain(this.bus.domain.name, req.domain);
      const { lastSeq, start } = await session.subscribe(req.orderId, req.afterSeq ?? 0);
      reply({ ok: true, orderId: req.orderId, lastSeq });
      start();
    } catch (err) {
      reply(this.errorAck(err, socket));
    }
  }

  @SubscribeMessage('unsubscribe')
  unsubscribe(
    @ConnectedSocket() socket: OrdersSocket,
    @MessageBody() payload: unknown,
    @Ack() ack: unknown,
  ): void {
    const reply = replier<UnsubscribeAck>(ack);
    try {
      const session = this.session(socket);
      const req = parsePayload(UnsubscribeDto, 'unsubscribe', payload);
      reply({ ok: true, orderId: req.orderId, released: session.unsubscribe(req.orderId) });
    } catch (err) {
      reply(this.errorAck(err, socket));
    }
  }

  private session(socket: OrdersSocket): SocketSubscriptions {
    const session = this.sessions.get(socket.id);
    if (session === undefined) throw new Error(`no session for socket ${socket.id}`);
    return session;
  }

  private errorAck(err: unknown, socket: OrdersSocket): ErrorAck {
    const gw = toGatewayError(err);
    if (gw.code === ErrorCode.Internal) {
      this.logger.error(`socket ${socket.id}: ${err instanceof Error ? err.stack : String(err)}`);
    }
    return { ok: false, ...errorBody(gw) };
  }
}

/** The client's ack callback, or a no-op when it sent none (acks are optional in socket.io). */
function replier<T>(ack: unknown): (res: T) => void {
  return typeof ack === 'function' ? (res: T) => void (ack as (res: T) => unknown)(res) : () => {};
}

/** A socket's token expiry, as an entry of the bus's deadline queue. */
class SocketExpiry implements DeadlineEntry {
  deadlineSlot = -1;
  deadlineAtMs = Infinity;

  constructor(
    private readonly socket: OrdersSocket,
    private readonly session: SocketSubscriptions,
    private readonly connection: SocketConnection,
  ) {}

  onDeadline(): void {
    this.session.expire();
    this.socket.disconnect(true);
    this.connection.ctx.ended();
  }
}
