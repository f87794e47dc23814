import type { Server } from '@grpc/grpc-js';
import type { Http2Server } from 'node:http2';

/**
 * The HTTP/2 servers a grpc-js Server listens with, for what grpc-js offers no option for
 * (preface-timeout.ts, repeated-authorization.ts). grpc-js does not expose them: its
 * `http2Servers` field is read, and start-up fails if it is gone rather than run without
 * those bounds. They exist once `bindAsync` has bound.
 */
export function http2ServersOf(server: Server): Iterable<Http2Server> {
  const servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map) || servers.size === 0) {
    throw new Error(
      'grpc-js keeps no http2Servers map: the preface timeout and the repeated ' +
        'authorization check cannot be applied (see transports/grpc/grpc-http2-servers.ts)',
    );
  }
  return (servers as Map<Http2Server, unknown>).keys();
}
