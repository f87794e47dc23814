import { randomBytes } from 'node:crypto';
import { createServer, type RequestListener, type Server } from 'node:http';
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';

/**
 * What the two framework floors share (NestJS on Fastify, and Fastify alone): the token
 * their guard takes, their listeners, and the load test's "listening" line. Kept apart so
 * the floors differ only in the framework that routes a request.
 */

/** This process's token: a request without `authorization: Bearer <it>` is refused. */
export const FLOOR_TOKEN = randomBytes(16).toString('hex');
export const FLOOR_BEARER = `Bearer ${FLOOR_TOKEN}`;

type Handler = (req: Http2ServerRequest, res: Http2ServerResponse) => void;

export interface FloorServers {
  /** Fastify's `serverFactory`: the TLS server (h2 and http/1.1) Fastify listens on. */
  readonly serverFactory: (handler: Handler) => Http2SecureServer;
  readonly https: { readonly allowHTTP1: true; readonly key: string; readonly cert: string };
  /** The plain HTTP/1.1 server running the same handler; set once Fastify built its own. */
  plain(): Server;
}

/**
 * One Fastify instance on two listeners, as the service's (apps/.../http-servers.ts): a
 * TLS port offering h2 and http/1.1, and a plain HTTP/1.1 port, both running Fastify's
 * request handler. TCP_NODELAY on the TLS port, as the service sets it.
 */
export async function floorServers(): Promise<FloorServers> {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048 });
  let plain: Server | undefined;
  return {
    https: { allowHTTP1: true, key: pems.private, cert: pems.cert },
    serverFactory: (handler) => {
      plain = createServer({ keepAliveTimeout: 60_000 }, handler as unknown as RequestListener);
      return createSecureServer(
        { key: pems.private, cert: pems.cert, allowHTTP1: true, noDelay: true },
        handler,
      );
    },
    plain: () => {
      if (plain === undefined) throw new Error('Fastify did not call serverFactory');
      return plain;
    },
  };
}

/**
 * Listens on the plain port too, prints the listening line (with the token) the load
 * test's launcher waits for, and stops on SIGTERM/SIGINT.
 */
export async function announceFloor(
  servers: FloorServers,
  httpsPort: number,
  close: () => Promise<void>,
): Promise<void> {
  const host = process.env.HOST ?? '127.0.0.1';
  const plain = servers.plain();
  const http = await new Promise<number>((resolve) =>
    plain.listen(Number(process.env.HTTP_PORT ?? 0), host, () =>
      resolve((plain.address() as AddressInfo).port),
    ),
  );
  const line = { event: 'listening', http, https: httpsPort, grpc: 0, pid: process.pid };
  process.stdout.write(`${JSON.stringify({ ...line, token: FLOOR_TOKEN })}\n`);
  const shutdown = (): void => {
    plain.close();
    void close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

/** The address to listen on (the launcher says 127.0.0.1) and the TLS port (0: any). */
export const floorListen = (): { host: string; port: number } => ({
  host: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.HTTPS_PORT ?? 0),
});
