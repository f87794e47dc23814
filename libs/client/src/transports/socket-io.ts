import { io, type Socket } from 'socket.io-client';
import { ErrorCode } from '@app/contracts/gateway-error';
import { StreamEndReason } from '@app/contracts/stream-envelope';
import { networkError, socketIoError, toWatchError, WatchError } from '../watch-error';
import type { ConnectionEnd, ConnectorFactory, ConnectRequest } from './connector';
import {
  itemWireNames,
  payloadOrderId,
  wireItem,
  withoutOrderId,
  type WireDomain,
} from './wire-items';

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

/** A socket, the token its handshake carried, and the subscriptions it carries. */
interface PooledSocket {
  readonly socket: Socket;
  readonly token: string | undefined;
  users: number;
  /** It disconnected or failed to connect: never handed out again. */
  dead: boolean;
}

/**
 * socket.io: `subscribe {orderId, afterSeq, domain}` with an ack, then the order's items and one
 * `end`. socket.io's own reconnection is off (the watch owns retries, resume and
 * backoff). Every watch that uses this connector with the same token shares one socket,
 * connecting or connected, each subscription on it ending with `unsubscribe` (so a watch
 * of a client from `createClient` costs a subscription, not a connection); a socket with
 * no subscription left is disconnected, unless it carries the newest token and the last
 * one ended in a way that resubscribes on it (`max_age`). The token travels in the
 * handshake (`auth.token`): a new token means a new socket, opened beside the old one
 * while the watch renews (the old one closes when its last subscription is let go).
 */
export const socketIoConnector: ConnectorFactory<WireDomain> = (opts) => {
  const { domain } = opts;
  const pool = new Set<PooledSocket>();
  /** The token of the newest socket: an idle socket with another one is let go. */
  let newestToken: string | undefined;

  const acquire = (req: ConnectRequest): PooledSocket => {
    const token = req.token();
    for (const p of pool) {
      if (!p.dead && p.token === token) {
        p.users++;
        return p;
      }
    }
    // An idle socket kept for a resubscribe carries an older token now.
    for (const p of pool) {
      if (p.users === 0) {
        p.socket.disconnect();
        pool.delete(p);
      }
    }
    const socket = io(namespaceUrl(opts.baseUrl), {
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
      auth: token ? { token } : {},
    });
    const p: PooledSocket = { socket, token, users: 1, dead: false };
    const die = () => {
      p.dead = true;
    };
    socket.once('connect_error', die);
    socket.once('disconnect', die);
    pool.add(p);
    newestToken = token;
    return p;
  };

  /**
   * A subscription on `p` is over; `orderId` is still subscribed on the service when the
   * watch left it (an abort) rather than the service ending it.
   */
  const release = (p: PooledSocket, keep: boolean, orderId?: string): void => {
    p.users--;
    if (p.users > 0 && !p.dead) {
      if (orderId !== undefined && p.socket.connected) p.socket.emit('unsubscribe', { orderId });
      return;
    }
    if (p.users > 0 || (keep && !p.dead && p.token === newestToken)) return;
    p.socket.disconnect();
    pool.delete(p);
  };

  return {
    connect: (req) =>
      new Promise<ConnectionEnd>((resolve, reject) => {
        const pooled = acquire(req);
        const s = pooled.socket;
        type Listener = (arg: unknown) => void;
        const listeners: [string, Listener][] = [];
        const on = (event: string, fn: Listener) => {
          listeners.push([event, fn]);
          s.on(event, fn);
        };
        let settled = false;
        /** The service holds this order's subscription (acked, not ended). */
        let subscribed = false;
        const finish = (keepSocket: boolean, settle: () => void) => {
          if (settled) return;
          settled = true;
          for (const [event, fn] of listeners) s.off(event, fn);
          req.signal.removeEventListener('abort', onAbort);
          release(pooled, keepSocket, subscribed ? req.orderId : undefined);
          settle();
        };
        const onAbort = () => finish(false, () => reject(new Error('aborted')));
        req.signal.addEventListener('abort', onAbort, { once: true });

        const subscribe = () =>
          s.emit(
            'subscribe',
            { orderId: req.orderId, afterSeq: req.afterSeq, domain: domain.name },
            (ack: SubscribeAck) => {
              if (settled) {
                // Left while the ack was on its way: the service subscribed it anyway.
                if (ack?.ok && s.connected) s.emit('unsubscribe', { orderId: req.orderId });
                return;
              }
              if (ack?.ok) {
                subscribed = true;
                req.opened();
              } else finish(true, () => reject(socketIoError(ack?.error, 'subscribe refused')));
            },
          );
        for (const name of itemWireNames(domain)) {
          on(name, (payload: unknown) => {
            if (payloadOrderId(name, payload) !== req.orderId) return;
            try {
              const item = wireItem(
                domain,
                name,
                name === 'skipped' ? withoutOrderId(payload) : payload,
              );
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
          subscribed = false;
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
      for (const p of pool) p.socket.disconnect();
      pool.clear();
    },
  };
};
