import type {
  DomainSnapshot,
  ErrorBody,
  StreamEndReason,
  StreamResetOf,
  StreamSkipped,
} from '@app/contracts';
import type { Socket } from 'socket.io';

/** The socket.io namespace of the order-status stream. */
export const ORDERS_NAMESPACE = '/orders';

/** Transport label for bus metrics (subscriptions, deliveries, connections). */
export const WS_TRANSPORT = 'ws';

/** Payload of `subscribe` (validated with `SubscribeDto`). */
export interface SubscribeRequest {
  readonly orderId: string;
  /** Resume point: the last seq the client saw; absent or 0 means from the start of retention. */
  readonly afterSeq?: number;
  /**
   * The stream domain the client decodes (e.g. `order`): another than the service's is
   * refused with a `failed_precondition` ack naming both; absent: not checked.
   */
  readonly domain?: string;
}

/** Payload of `unsubscribe` (validated with `UnsubscribeDto`). */
export interface UnsubscribeRequest {
  readonly orderId: string;
}

/** Every failed request is acknowledged with the same error body as HTTP carries. */
export type ErrorAck = { readonly ok: false } & ErrorBody;

export type SubscribeAck =
  | {
      readonly ok: true;
      readonly orderId: string;
      /** The order's last seq when the subscription started; events after `afterSeq` follow. */
      readonly lastSeq: number;
    }
  | ErrorAck;

export type UnsubscribeAck =
  | {
      readonly ok: true;
      readonly orderId: string;
      /** False when nothing was subscribed (unsubscribe is idempotent). */
      readonly released: boolean;
    }
  | ErrorAck;

/** Why the server stopped sending one order: resume with `afterSeq` = last seq unless completed. */
export interface StreamEnd {
  readonly orderId: string;
  readonly reason: StreamEndReason;
  /**
   * Reconnect advice (graceful shutdown): wait this long before reconnecting and
   * resubscribing, randomised per client so a restart does not cause a reconnect storm.
   */
  readonly retryAfterMs?: number;
}

/** A `skipped` range, with the order it belongs to (`reset` and `status` carry theirs). */
export interface StreamSkippedPayload extends StreamSkipped {
  readonly orderId: string;
}

/**
 * What the server emits of its own, typed so every such `socket.emit()` is checked: the
 * envelope's items and the end. The domain's events go out beside them under their kinds'
 * wire names, known at run time (SocketSink); a client types them with its domain's map
 * (the order domain's `DomainSocketEvents`).
 */
export interface ServerToClientEvents<S extends DomainSnapshot = DomainSnapshot> {
  /** The resume point could not be served without a gap: replace the view with `snapshot`. */
  reset: (reset: StreamResetOf<S>) => void;
  /**
   * Events `fromSeq..toSeq` were dropped because this socket read too slowly (the bus
   * queue's overflow policy): they are not coming. The cursor to resume after is `toSeq`.
   */
  skipped: (skipped: StreamSkippedPayload) => void;
  end: (end: StreamEnd) => void;
}

/** What a client may send; each message carries an acknowledgement callback. */
export interface ClientToServerEvents {
  subscribe: (req: SubscribeRequest, ack: (res: SubscribeAck) => void) => void;
  unsubscribe: (req: UnsubscribeRequest, ack: (res: UnsubscribeAck) => void) => void;
}

/** A server-side socket of the `/orders` namespace. */
export type OrdersSocket = Socket<ClientToServerEvents, ServerToClientEvents>;
