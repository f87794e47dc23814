import type { IncomingMessage } from 'node:http';
import { authorizationValues, type Principal, type StreamTicketStore } from '@app/auth';
import type { AuthService } from '../../auth/auth.service';

/** The subprotocol the service speaks; a client offering it gets it back. */
export const WEBSOCKET_PROTOCOL = 'order-status.v1';
/**
 * A browser's WebSocket cannot send headers: it may offer its token as a second subprotocol,
 * `bearer.<token>` (the service never echoes it, it answers `order-status.v1`). Only tokens
 * made of RFC 7230 token characters fit (a JWT does).
 */
export const BEARER_PROTOCOL_PREFIX = 'bearer.';

/** What a WebSocket upgrade may authenticate with. */
export interface UpgradeCredentials {
  readonly req: IncomingMessage;
  readonly orderId: string;
  /** `?ticket=`, when given. */
  readonly ticket: string | null;
  readonly cookieName: string;
  parseCookie(header: string): Record<string, string | undefined>;
}

/**
 * Who opens a raw WebSocket, from the first credential present, in the HTTP guard's order
 * (the first one present decides, so a bad header is refused even beside a good cookie):
 * `Authorization: Bearer` (non-browser clients), a `bearer.<token>` subprotocol, a
 * single-use `?ticket=` for this order, then the session cookie.
 * @throws GatewayError Unauthenticated, counted under the `websocket` transport.
 */
export async function authenticateUpgrade(
  auth: AuthService,
  tickets: StreamTicketStore,
  transport: string,
  creds: UpgradeCredentials,
): Promise<Principal> {
  const { req } = creds;
  if (req.headers.authorization !== undefined) {
    return auth.authenticateHeader(authorizationValues(req.rawHeaders), transport);
  }
  const fromProtocol = protocolToken(req.headers['sec-websocket-protocol']);
  if (fromProtocol !== undefined) return auth.authenticate(fromProtocol, transport);
  if (creds.ticket !== null) {
    try {
      return await tickets.redeem(creds.ticket, creds.orderId);
    } catch (err) {
      auth.recordFailure(transport, err);
      throw err;
    }
  }
  const cookie = req.headers.cookie;
  const session = cookie === undefined ? undefined : creds.parseCookie(cookie)[creds.cookieName];
  return auth.authenticate(session, transport);
}

/** The token of a `bearer.<token>` subprotocol, if one is offered. */
function protocolToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  for (const offered of header.split(',')) {
    const protocol = offered.trim();
    // An empty token is verified (and refused, and counted) like any other bad one.
    if (protocol.startsWith(BEARER_PROTOCOL_PREFIX))
      return protocol.slice(BEARER_PROTOCOL_PREFIX.length);
  }
  return undefined;
}

/** ws's `handleProtocols`: the service's protocol when offered, else none. */
export function selectProtocol(offered: Set<string>): string | false {
  return offered.has(WEBSOCKET_PROTOCOL) ? WEBSOCKET_PROTOCOL : false;
}
