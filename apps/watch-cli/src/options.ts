import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseOrderId } from '@app/contracts/validation';
import { DEFAULT_DOMAIN, knownDomains } from './domains';

export const TRANSPORTS = ['grpc', 'sse', 'ws', 'websocket', 'longpoll'] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** @default 3000: the service's own HTTP_PORT default, used when HTTP_PORT is unset */
export const DEFAULT_HTTP_PORT = 3000;
/** @default 50051: the service's own GRPC_PORT default, used when GRPC_PORT is unset */
export const DEFAULT_GRPC_PORT = 50051;
/**
 * @default 30 s: a watch that has never connected gives up after this (one that did keeps
 * resuming), so a wrong address fails instead of retrying for ever.
 */
export const DEFAULT_CONNECT_TIMEOUT_S = 30;

export interface WatchOptions {
  /** The stream's id: an order id for the order domain. */
  readonly streamId: string;
  /** The domain of its events, one of `knownDomains()`. @default order */
  readonly domain: string;
  readonly transport: Transport;
  /** Base URL (HTTP transports) or host:port (gRPC). */
  readonly url: string;
  /** Bearer token: HTTP header, socket.io `auth.token` or gRPC metadata. */
  readonly token?: string;
  /**
   * A file holding the token, read again whenever a new token is needed (before expiry,
   * after `token_expired`, after a refusal), so a token rotated on disk is picked up.
   */
  readonly tokenFile?: string;
  /** Resume after this seq instead of from the start of retention. @default 0 */
  readonly after: number;
  /** Give up when no connection opened within this many ms. */
  readonly connectTimeoutMs: number;
}

/** The service's address on this machine: the port it is configured with in this shell. */
export function defaultUrl(transport: Transport, env: NodeJS.ProcessEnv): string {
  return transport === 'grpc'
    ? `127.0.0.1:${env.GRPC_PORT || DEFAULT_GRPC_PORT}`
    : `http://127.0.0.1:${env.HTTP_PORT || DEFAULT_HTTP_PORT}`;
}

export const USAGE = `usage: npm run watch -- <streamId> [--domain NAME] [--transport grpc|sse|ws|websocket|longpoll] [--url URL] [--token-file PATH] [--after SEQ] [--connect-timeout S]

Prints every event of one stream (an order's status changes and tracking updates, by
default) with its seq, kind and publish-to-receive latency, and resumes by itself (from the
last seq it printed) after a disconnect or a server restart. Exits 0 when the stream is
finished (or on Ctrl-C), 2 for bad usage (an unknown --domain among them), 3 when the
service refuses the watch for good (bad or expired token, no permission, a stream it does
not have), 4 when it never connected within --connect-timeout, 5 when the service streams
another domain than --domain.

The token comes from ORDER_STATUS_TOKEN or --token-file (--token also works, but npm
prints a script's arguments, so the token would show in the terminal).

  --domain           the service's STREAM_DOMAIN: ${knownDomains().join(', ')}   default: ${DEFAULT_DOMAIN}
  --transport        grpc, sse, ws (socket.io), websocket (raw) or longpoll   default: sse
  --url              http(s)://host:port, or host:port for grpc   default: 127.0.0.1 on
                     HTTP_PORT (${DEFAULT_HTTP_PORT}) or, for grpc, GRPC_PORT (${DEFAULT_GRPC_PORT}), as the service
  --token-file       file with the bearer token, re-read when a new token is needed
  --after            resume after this seq                        default: 0
  --connect-timeout  seconds to wait for a first connection       default: ${DEFAULT_CONNECT_TIMEOUT_S}`;

/** Parses argv; throws an Error whose message is fit for the terminal. */
export function parseWatchArgs(argv: readonly string[], env = process.env): WatchOptions {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      domain: { type: 'string', short: 'd', default: DEFAULT_DOMAIN },
      transport: { type: 'string', short: 't', default: 'sse' },
      url: { type: 'string', short: 'u' },
      token: { type: 'string' },
      'token-file': { type: 'string' },
      after: { type: 'string', default: '0' },
      'connect-timeout': { type: 'string', default: String(DEFAULT_CONNECT_TIMEOUT_S) },
    },
  });
  if (positionals.length !== 1) throw new Error('exactly one stream id is required');
  const known = knownDomains();
  if (!known.includes(values.domain)) {
    throw new Error(`--domain must be one of ${known.join(', ')} (got ${values.domain})`);
  }
  const transport = values.transport as Transport;
  if (!TRANSPORTS.includes(transport)) {
    throw new Error(`--transport must be one of ${TRANSPORTS.join(', ')}`);
  }
  const after = Number(values.after);
  if (!Number.isSafeInteger(after) || after < 0) throw new Error('--after must be an integer >= 0');
  const connectTimeoutS = Number(values['connect-timeout']);
  if (!Number.isFinite(connectTimeoutS) || connectTimeoutS <= 0) {
    throw new Error('--connect-timeout must be a number of seconds > 0');
  }
  const tokenFile = values['token-file'];
  if (tokenFile !== undefined && values.token !== undefined) {
    throw new Error('give --token or --token-file, not both');
  }
  const token =
    tokenFile !== undefined ? readToken(tokenFile) : (values.token ?? env.ORDER_STATUS_TOKEN);
  return {
    streamId: parseOrderId(positionals[0]),
    domain: values.domain,
    transport,
    url: values.url ?? defaultUrl(transport, env),
    after,
    connectTimeoutMs: connectTimeoutS * 1000,
    ...(token ? { token } : {}),
    ...(tokenFile !== undefined ? { tokenFile } : {}),
  };
}

/** The token in `path` (surrounding whitespace and a trailing newline removed). */
export function readToken(path: string): string {
  return readFileSync(path, 'utf8').trim();
}
