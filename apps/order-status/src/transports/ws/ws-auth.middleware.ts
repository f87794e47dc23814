import { authorizationValues, type Principal } from '@app/auth';
import { errorBody, ErrorCode, GatewayError, toGatewayError } from '@app/contracts';
import type { AuthService } from '../../auth/auth.service';
import type { StreamConnections } from '../../connections/stream-connections.service';
import { WS_TRANSPORT, type OrdersSocket } from './orders-ws.events';
import { SocketConnection } from './socket-connection';
import { socketConnectionPort } from './socket-connection-port';

/** What the handshake leaves on `socket.data` for the gateway (and the connection log). */
export interface OrdersSocketData {
  principal?: Principal;
  /** The socket's connection life cycle; set when the handshake succeeded. */
  connection?: SocketConnection;
}

/** The error a refused handshake reaches the client with: `connect_error`, `err.data`. */
export type HandshakeError = Error & { data: ReturnType<typeof errorBody>['error'] };

/**
 * socket.io namespace middleware: authentication happens here, in the handshake, because
 * Nest guards never run on a connection (only on messages). The token comes from
 * `auth: { token }` (what browsers can send) or an `Authorization: Bearer` header
 * (non-browser clients). A refused client gets `connect_error` with
 * `err.data = { code: 'unauthenticated' | 'resource_exhausted', message }` and no socket.
 *
 * The socket's connection life cycle starts here: the principal's slot is taken once the
 * token is verified, unless the client already left meanwhile (a connect-and-drop storm
 * must not leak slots), and is given back exactly once when the socket disconnects or
 * its engine connection closes.
 */
export function wsAuthMiddleware(auth: AuthService, connections: StreamConnections) {
  return (socket: OrdersSocket, next: (err?: Error) => void): void => {
    const raw: unknown = (socket.handshake.auth as Record<string, unknown> | undefined)?.token;
    let principal: Principal | undefined;
    // socket.io's `next` is called once, then dropped: the life cycle's subscriber lives as
    // long as the socket, and must not keep the handshake's middleware chain alive.
    let answer: ((err?: Error) => void) | undefined = next;
    const reply = (err?: Error) => {
      const once = answer;
      answer = undefined;
      once?.(err);
    };
    connections
      .lifecycle<SocketConnection>({
        transport: WS_TRANSPORT,
        port: socketConnectionPort(socket),
        authorize: async () => {
          principal = await (typeof raw === 'string'
            ? auth.authenticate(raw.replace(/^Bearer +/i, ''), 'ws')
            : auth.authenticateHeader(authorizationValues(socket.request.rawHeaders), 'ws'));
        },
        acquireSlot: () => auth.acquireConnection(authenticated(principal)),
        open: (ctx) => {
          const connection = new SocketConnection(authenticated(principal), ctx);
          const data = socket.data as OrdersSocketData;
          data.principal = connection.principal;
          data.connection = connection;
          return Promise.resolve(connection);
        },
      })
      .subscribe({
        next: () => reply(),
        error: (err: unknown) => reply(handshakeError(err)),
        // Gone before the handshake finished (after it, `reply` is spent and this is a no-op).
        complete: () =>
          reply(handshakeError(new GatewayError(ErrorCode.Unavailable, 'connection closed'))),
      });
  };
}

function authenticated(principal: Principal | undefined): Principal {
  if (principal === undefined) throw new Error('handshake step ran before authentication');
  return principal;
}

function handshakeError(err: unknown): HandshakeError {
  const body = errorBody(toGatewayError(err)).error;
  return Object.assign(new Error(body.message), { data: body });
}
