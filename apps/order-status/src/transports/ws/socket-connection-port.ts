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
  return new SocketConnectionPort(socket);
}

/** A class, not closures: a socket keeps its port for its whole life. */
class SocketConnectionPort implements ConnectionPort {
  constructor(private readonly socket: OrdersSocket) {}

  watchGone(onGone: () => void): void {
    const conn = this.socket.conn;
    if (conn.readyState === 'closing' || conn.readyState === 'closed') {
      onGone();
      return;
    }
    this.socket.once('disconnect', onGone);
    conn.once('close', onGone);
  }

  unwatchGone(onGone: () => void): void {
    this.socket.off('disconnect', onGone);
    this.socket.conn.off('close', onGone);
  }

  destroy(): void {
    this.socket.conn.close(true);
    this.socket.request.socket.destroy();
  }
}
