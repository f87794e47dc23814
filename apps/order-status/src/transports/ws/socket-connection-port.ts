import type { ConnectionPort } from '../../connections/stream-lifecycle';
import type { OrdersSocket } from './orders-ws.events';

/**
 * The connection port of a socket.io socket.
 *
 * Gone: the socket's 'disconnect' or its engine connection's 'close' (a handshake can die
 * before 'connect', and then only the engine tells). Both may already have happened
 * while the (async) handshake middleware verified the token, so the engine's state is
 * checked first.
 *
 * Destroy: the server has already sent the disconnect; a client that does not read
 * would keep the engine connection, and a WebSocket close handshake that never
 * completes holds the TCP socket for 30 s more, so the underlying socket is destroyed.
 */
export function socketConnectionPort(socket: OrdersSocket): ConnectionPort {
  const conn = socket.conn;
  return {
    watchGone: (onGone) => {
      if (conn.readyState === 'closing' || conn.readyState === 'closed') {
        onGone();
        return () => {};
      }
      socket.once('disconnect', onGone);
      conn.once('close', onGone);
      return () => {
        socket.off('disconnect', onGone);
        conn.off('close', onGone);
      };
    },
    destroy: () => {
      conn.close(true);
      socket.request.socket.destroy();
    },
  };
}
