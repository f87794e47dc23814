import type { Server } from '@grpc/grpc-js';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { authorizationValues } from '@app/auth';
import { http2ServersOf } from './grpc-http2-servers';

/**
 * Hands grpc-js every `authorization` field of a request, not only the first: Node's
 * HTTP/2 layer keeps the first of a repeated single-value field in the headers object
 * grpc-js builds the call's metadata from, so two of them used to authenticate as the
 * first. With both in the metadata, the handlers' check (`parseBearer`) refuses the call
 * with INVALID_ARGUMENT, as the HTTP routes refuse such a request. Runs before grpc-js's
 * own listener, on the same headers object. Call it after `bindAsync`.
 */
export function exposeRepeatedAuthorization(server: Server): void {
  for (const http2 of http2ServersOf(server)) {
    http2.prependListener(
      'stream',
      (
        _stream: ServerHttp2Stream,
        headers: IncomingHttpHeaders,
        _flags: number,
        rawHeaders: string[],
      ) => {
        const values = authorizationValues(rawHeaders);
        if (Array.isArray(values)) {
          (headers as Record<string, unknown>).authorization = values;
        }
      },
    );
  }
}
