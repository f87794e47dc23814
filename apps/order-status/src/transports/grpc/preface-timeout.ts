import type { Server } from '@grpc/grpc-js';
import type { ServerHttp2Session } from 'node:http2';
import { http2ServersOf } from './grpc-http2-servers';

/**
 * Closes every connection to `server` that has not sent the HTTP/2 connection preface
 * and its SETTINGS frame (RFC 9113 section 3.4) within `timeoutMs`, as the HTTP ports
 * close a socket that never finishes its headers or TLS handshake. Node makes the session
 * as the TCP connection opens, so without this only the keepalive PING that goes
 * unanswered (GRPC_KEEPALIVE_TIME_MS + GRPC_KEEPALIVE_TIMEOUT_MS) ends a silent one.
 * grpc-js has no option for this. Call it after `bindAsync`, which creates the servers.
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
