import type { Server } from '@grpc/grpc-js';
import type { Server as NetServer } from 'node:net';
import type { ServerHttp2Session } from 'node:http2';

/**
 * Closes every connection to `server` that has not sent the HTTP/2 connection preface
 * and its SETTINGS frame (RFC 9113 section 3.4) within `timeoutMs`, as the HTTP ports
 * close a socket that never finishes its headers or TLS handshake. Node makes the session
 * as the TCP connection opens, so without this only the keepalive PING that goes
 * unanswered (GRPC_KEEPALIVE_TIME_MS + GRPC_KEEPALIVE_TIMEOUT_MS) ends a silent one.
 *
 * grpc-js exposes neither its HTTP/2 servers nor an option for this; its `http2Servers`
 * field is read, and start-up fails if it is gone rather than run without the bound.
 * Call it after `bindAsync`, which creates the servers.
 */
export function closeSilentConnections(server: Server, timeoutMs: number): void {
  for (const http2 of http2ServersOf(server)) {
    http2.on('session', (session: ServerHttp2Session) => {
      const timer = setTimeout(() => session.destroy(), timeoutMs);
      const settled = () => clearTimeout(timer);
      session.once('remoteSettings', settled);
      session.once('close', settled);
    });
  }
}

function http2ServersOf(server: Server): Iterable<NetServer> {
  const servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map) || servers.size === 0) {
    throw new Error(
      'grpc-js keeps no http2Servers map: GRPC_PREFACE_TIMEOUT_MS cannot be applied ' +
        '(see transports/grpc/preface-timeout.ts)',
    );
  }
  return (servers as Map<NetServer, unknown>).keys();
}
