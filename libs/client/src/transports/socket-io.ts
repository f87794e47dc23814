import { io, type Socket } from 'socket.io-client';
import { ErrorCode } from '@app/contracts/gateway-error';
import { StreamEndReason } from '@app/contracts/order-events';
import { networkError, socketIoError, toWatchError, WatchError } from '../watch-error';
import type { ConnectionEnd, ConnectorFactory, ConnectRequest } from './connector';
import { ITEM_WIRE_NAMES, payloadOrderId, wireItem, withoutOrderId } from './wire-items';

/** The service's socket.io namespace. */
export const ORDERS_NAMESPACE = '/orders';

interface SubscribeAck {
  readonly ok: boolean;
  readonly error?: unknown;
}

interface EndPayload {
  readonly orderId: string;
  readonly reason: string;
  readonly retryAfterMs?: number;
}

function namespaceUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${ORDERS_NAMESPACE}`;
}

/** A socket and the token version its handshake carried. */
interface SharedSocket {
  readonly socket: Socket;
  readonly tokenVersion: number;
}

/**
 * socket.io: `subscribe {orderId, afterSeq}` with an ack, then the order's items and one
 * `end`. socket.io's own reconnection is off (the watch owns retries, resume and
 * backoff); the socket is kept between attempts while it is connected with the current
 * token, so a `max_age` end only costs a resubscribe, not a new handshake. The token
 * travels in the handshake (`auth.token`): a new token means a new socket, opened beside
 * the old one while the watch renews (the old one closes when its subscription is let go).
 */
export const socketIoConnector: ConnectorFactory = (opts) => {
  let latest: SharedSocket | undefined;
  /** Sockets with a subscription in progress. */
  const busy = new Set<Socket>();

  const acquire = (req: ConnectRequest): Socket => {
    if (latest?.socket.connected && latest.tokenVersion === req.tokenVersion()) {
      return latest.socket;
    }
    if (latest !== undefined && !busy.has(latest.socket)) latest.socket.disconnect();
    const token = req.token();
    const socket = io(namespaceUrl(opts.baseUrl), {
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
      auth: token ? { token } : {},
    });
    latest = { socket, tokenVersion: req.tokenVersion() };
    return socket;
  };

  /** A subscription on `s` is over: keep the socket only if asked and it is the latest. */
  const release = (s: Socket, keep: boolean): void => {
    busy.delete(s);
    if (keep && latest?.socket === s) return;
    s.disconnect();
    if (latest?.socket === s) latest = undefined;
  };

  return {
    connect: (req) =>
      new Promise<ConnectionEnd>((resolve, reject) => {
        const s = acquire(req);
        busy.add(s);
        type Listener = (arg: unknown) => void;
        const listeners: [string, Listener][] = [];
        const on = (event: string, fn: Listener) => {
          listeners.push([event, fn]);
          s.on(event, fn);
        };
        let settled = false;
        const finish = (keepSocket: boolean, settle: () => void) => {
          if (settled) return;
          settled = true;
          for (const [event, fn] of listeners) s.off(event, fn);
          req.signal.removeEventListener('abort', onAbort);
          release(s, keepSocket);
          settle();
        };
        const onAbort = () => finish(false, () => reject(new Error('aborted')));
        req.signal.addEventListener('abort', onAbort, { once: true });

        const subscribe = () =>
          s.emit(
            'subscribe',
            { orderId: req.orderId, afterSeq: req.afterSeq },
            (ack: SubscribeAck) => {
              if (settled) return;
              if (ack?.ok) req.opened();
              else finish(true, () => reject(socketIoError(ack?.error, 'subscribe refused')));
            },
          );
        for (const name of ITEM_WIRE_NAMES) {
          on(name, (payload: unknown) => {
            if (payloadOrderId(name, payload) !== req.orderId) return;
            try {
              const item = wireItem(name, name === 'skipped' ? withoutOrderId(payload) : payload);
              if (item) req.item(item);
            } catch (err) {
              finish(false, () => reject(toWatchError(err)));
            }
          });
        }
        on('end', (raw) => {
          const end = raw as EndPayload | undefined;
          if (end?.orderId !== req.orderId) return;
          // After token_expired the service disconnects the socket; after shutdown it
          // closes it; after max_age the socket stays up for the resubscribe.
          const reason = end.reason as StreamEndReason;
          const keep = reason === StreamEndReason.MaxAge || reason === StreamEndReason.Overflow;
          finish(keep, () =>
            resolve(
              typeof end.retryAfterMs === 'number'
                ? { reason: end.reason, retryAfterMs: end.retryAfterMs }
                : { reason: end.reason },
            ),
          );
        });
        on('connect_error', (raw) => {
          const err = raw as Error & { data?: unknown };
          finish(false, () =>
            reject(
              err.data !== undefined
                ? socketIoError(err.data, err.message)
                : networkError(namespaceUrl(opts.baseUrl), err),
            ),
          );
        });
        on('disconnect', (reason) =>
          finish(false, () =>
            reject(new WatchError(ErrorCode.Unavailable, `disconnected (${String(reason)})`)),
          ),
        );
        if (s.connected) subscribe();
        else on('connect', subscribe);
      }),
    close: () => {
      latest?.socket.disconnect();
      latest = undefined;
    },
  };
};
