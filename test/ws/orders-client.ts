import { io, type Socket } from 'socket.io-client';
import type {
  DomainSocketEvents,
  OrderEvent,
  OrderSnapshot,
  OrderStatusChanged,
  StreamReset,
  TrackingUpdated,
} from '@app/order-domain';
import {
  ORDERS_NAMESPACE,
  type ClientToServerEvents,
  type ServerToClientEvents,
  type StreamEnd,
  type SubscribeAck,
  type UnsubscribeAck,
} from '../../apps/order-status/src/transports/ws/orders-ws.events';
import { DEFAULT_TEST_TOKEN } from '../support/auth';
import { once, waitFor } from '../support/wait-for';

/** The order domain's events beside the envelope's, as a client of the order service sees them. */
export type OrdersClient = Socket<
  DomainSocketEvents & ServerToClientEvents<OrderSnapshot>,
  ClientToServerEvents
>;
export type TransportName = 'websocket' | 'polling';

/** Everything one client saw, in arrival order (acks included, to check ack-before-events). */
export type Received =
  | { readonly type: 'ack'; readonly ack: SubscribeAck }
  | { readonly type: 'status'; readonly event: OrderStatusChanged }
  | { readonly type: 'tracking'; readonly event: TrackingUpdated }
  | { readonly type: 'reset'; readonly reset: StreamReset }
  | { readonly type: 'end'; readonly end: StreamEnd };

export interface ConnectOptions {
  readonly transport?: TransportName;
  /** PEM to trust (the service's development certificate) for https URLs. */
  readonly ca?: string;
  /** Sent as `auth.token` in the handshake; the default test token, `null` for none. */
  readonly token?: string | null;
  /** Extra handshake headers (e.g. an Origin). */
  readonly extraHeaders?: Record<string, string>;
}

export const ACK_TIMEOUT_MS = 5_000;

/** A connected client with a log of what it received. */
export interface RecordingClient {
  readonly socket: OrdersClient;
  readonly received: Received[];
  /** The `status` events of one order, in arrival order. */
  statuses(orderId: string): OrderStatusChanged[];
  /** The `status` and `tracking` events of one order (one seq sequence), in arrival order. */
  events(orderId: string): OrderEvent[];
  /** Waits (bounded) until `check(received)` holds. */
  until(
    check: (received: Received[]) => boolean,
    message: string,
    timeoutMs?: number,
  ): Promise<void>;
  /** Subscribes; the ack is also logged in `received` the moment it arrives. */
  subscribe(orderId: string, afterSeq?: number): Promise<SubscribeAck>;
  unsubscribe(orderId: string): Promise<UnsubscribeAck>;
}

/**
 * Opens real socket.io clients and closes every one of them in `closeAll()` (afterEach).
 * Reconnection is off: a test that loses its connection must see it, not have it hidden.
 */
export class ClientPool {
  private readonly sockets: OrdersClient[] = [];

  async connect(baseUrl: string, opts: ConnectOptions = {}): Promise<RecordingClient> {
    const socket: OrdersClient = io(`${baseUrl}${ORDERS_NAMESPACE}`, {
      transports: [opts.transport ?? 'websocket'],
      reconnection: false,
      forceNew: true,
      ...(opts.ca ? { ca: opts.ca } : {}),
      ...(opts.extraHeaders ? { extraHeaders: opts.extraHeaders } : {}),
      auth: opts.token === null ? {} : { token: opts.token ?? DEFAULT_TEST_TOKEN },
    });
    this.sockets.push(socket);
    const received: Received[] = [];
    socket.on('status', (event) => received.push({ type: 'status', event }));
    socket.on('tracking', (event) => received.push({ type: 'tracking', event }));
    socket.on('reset', (reset) => received.push({ type: 'reset', reset }));
    socket.on('end', (end) => received.push({ type: 'end', end }));
    await connected(socket);
    return {
      socket,
      received,
      statuses: (orderId) =>
        received.flatMap((r) =>
          r.type === 'status' && r.event.orderId === orderId ? [r.event] : [],
        ),
      events: (orderId) =>
        received.flatMap((r) =>
          (r.type === 'status' || r.type === 'tracking') && r.event.orderId === orderId
            ? [r.event]
            : [],
        ),
      until: async (check, message, timeoutMs) => {
        await waitFor(() => check(received), message, timeoutMs);
      },
      subscribe: (orderId, afterSeq = 0) =>
        new Promise((resolve, reject) => {
          socket.timeout(ACK_TIMEOUT_MS).emit('subscribe', { orderId, afterSeq }, (err, ack) => {
            if (err) return reject(err);
            // Logged synchronously, before the packets that follow it are processed.
            received.push({ type: 'ack', ack });
            resolve(ack);
          });
        }),
      unsubscribe: (orderId) =>
        socket.timeout(ACK_TIMEOUT_MS).emitWithAck('unsubscribe', { orderId }),
    };
  }

  /** Disconnects every client and waits until each engine connection is really closed. */
  async closeAll(): Promise<void> {
    await Promise.all(this.sockets.splice(0).map(closeClient));
  }
}

/** Disconnects and resolves once the underlying engine.io connection is closed. */
export async function closeClient(socket: OrdersClient): Promise<void> {
  const engine = socket.io.engine;
  const closed = engine.readyState === 'closed' ? Promise.resolve() : once(engine, 'close');
  socket.disconnect();
  await closed;
}

/** True once `orderId` has an `end` in the log. */
export function ended(orderId: string): (received: Received[]) => boolean {
  return (received) => received.some((r) => r.type === 'end' && r.end.orderId === orderId);
}

/** True once an event of `orderId` with seq >= `seq` is in the log. */
export function reached(orderId: string, seq: number): (received: Received[]) => boolean {
  return (received) =>
    received.some(
      (r) =>
        (r.type === 'status' || r.type === 'tracking') &&
        r.event.orderId === orderId &&
        r.event.seq >= seq,
    );
}

/** The log of one order: its ack, statuses as seqs, resets and end, in arrival order. */
export function timeline(received: Received[], orderId: string): string[] {
  return received.flatMap((r) => {
    switch (r.type) {
      case 'ack':
        return r.ack.ok && r.ack.orderId === orderId ? [`ack:${r.ack.lastSeq}`] : [];
      case 'status':
        return r.event.orderId === orderId ? [`${r.event.seq}:${r.event.status}`] : [];
      case 'tracking':
        return r.event.orderId === orderId ? [`${r.event.seq}:tracking`] : [];
      case 'reset':
        return r.reset.snapshot.orderId === orderId
          ? [`reset:${r.reset.reason}:${r.reset.snapshot.lastSeq}`]
          : [];
      case 'end':
        return r.end.orderId === orderId ? [`end:${r.end.reason}`] : [];
    }
  });
}

/** Resolves on `connect`, rejects on `connect_error` or after `timeoutMs`; leaves no timer. */
export function connected(socket: OrdersClient, timeoutMs = 5_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (err?: Error) => {
      clearTimeout(timer);
      socket.off('connect', onConnect);
      socket.off('connect_error', settle);
      if (err) reject(err);
      else resolve();
    };
    const onConnect = () => settle();
    const timer = setTimeout(() => settle(new Error('timed out connecting')), timeoutMs);
    socket.once('connect', onConnect);
    socket.once('connect_error', settle);
  });
}
