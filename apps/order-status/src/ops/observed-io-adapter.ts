import type { Namespace, Socket } from 'socket.io';
import { OrdersIoAdapter } from '../transports/ws/orders-io.adapter';
import { principalOf } from '../connections/connection-observer';
import type { ConnectionLog } from './connection-log';

/**
 * The service's socket.io adapter plus what operations need from outside the gateway:
 * one log line per socket opened and closed, and a handle on every engine connection so
 * graceful shutdown can close them after the reconnect advice has been sent.
 */
export class ObservedIoAdapter extends OrdersIoAdapter {
  private readonly sockets = new Set<Socket>();
  private log?: ConnectionLog;

  /** Set once the application context exists (the adapter is created before it). */
  useConnectionLog(log: ConnectionLog): void {
    this.log = log;
  }

  override bindClientConnect(server: Namespace, callback: (...args: unknown[]) => void): void {
    // Namespace middleware (auth) has run by 'connection', so socket.data is filled in.
    server.on('connection', (socket) => {
      const conn = this.log?.opened('ws', principalOf(socket.data), {
        namespace: server.name,
        engineTransport: socket.conn.transport.name,
      });
      this.sockets.add(socket);
      socket.once('disconnect', (reason) => {
        this.sockets.delete(socket);
        conn?.closed(reason);
      });
    });
    super.bindClientConnect(server, callback);
  }

  /**
   * Closes every engine connection. engine.io flushes its write buffer first, so the
   * `end` packets sent just before still reach the clients; the clients see a transport
   * close and reconnect by themselves (with the advised delay when they honour it).
   */
  closeAllConnections(): void {
    for (const socket of this.sockets) socket.conn.close();
  }
}
