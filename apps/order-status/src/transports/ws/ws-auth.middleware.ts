import type { Principal } from '@app/auth';
import { errorBody, toGatewayError } from '@app/contracts';
import type { AuthService } from '../../auth/auth.service';
import type { OrdersSocket } from './orders-ws.events';

/** What the handshake leaves on `socket.data` for the gateway (and the connection log). */
export interface OrdersSocketData {
  principal?: Principal;
  /** Gives the principal's connection slot back; idempotent. */
  releaseSlot?: () => void;
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
 * The principal's connection slot is taken here and given back when the socket
 * disconnects or its engine connection closes (a handshake can die before 'connect').
 */
export function wsAuthMiddleware(auth: AuthService) {
  return (socket: OrdersSocket, next: (err?: Error) => void): void => {
    const raw: unknown = (socket.handshake.auth as Record<string, unknown> | undefined)?.token;
    const pending =
      typeof raw === 'string'
        ? auth.authenticate(raw.replace(/^Bearer +/i, ''))
        : auth.authenticateHeader(socket.handshake.headers.authorization);
    pending
      .then((principal) => {
        const releaseSlot = auth.acquireConnection(principal);
        const data = socket.data as OrdersSocketData;
        data.principal = principal;
        data.releaseSlot = releaseSlot;
        socket.once('disconnect', releaseSlot);
        socket.conn.once('close', releaseSlot);
        next();
      })
      .catch((err: unknown) => {
        const body = errorBody(toGatewayError(err)).error;
        next(Object.assign(new Error(body.message), { data: body }) satisfies HandshakeError);
      });
  };
}
