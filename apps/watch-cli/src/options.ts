import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseOrderId } from '@app/contracts/validation';

export const TRANSPORTS = ['grpc', 'sse', 'ws', 'longpoll'] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** @default 'http://127.0.0.1:3000' (HTTP transports) */
export const DEFAULT_HTTP_URL = 'http://127.0.0.1:3000';
/** @default '127.0.0.1:50051' (gRPC) */
export const DEFAULT_GRPC_ADDRESS = '127.0.0.1:50051';

export interface WatchOptions {
  readonly orderId: string;
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
}

export const USAGE = `usage: npm run watch -- <orderId> [--transport grpc|sse|ws|longpoll] [--url URL] [--token TOKEN | --token-file PATH] [--after SEQ]

Prints every status change and tracking update of one order with its publish-to-receive
latency, and resumes by itself (from the last seq it printed) after a disconnect or a
server restart. Exits 0 when the order is finished (or on Ctrl-C), 3 when the service
refuses the watch for good (bad or expired token, no permission, unknown order).

  --transport   grpc, sse, ws (socket.io) or longpoll            default: sse
  --url         http(s)://host:port, or host:port for grpc        default: ${DEFAULT_HTTP_URL} / ${DEFAULT_GRPC_ADDRESS}
  --token       bearer token (also read from ORDER_STATUS_TOKEN)
  --token-file  file with the bearer token, re-read when a new token is needed
  --after       resume after this seq                             default: 0`;

/** Parses argv; throws an Error whose message is fit for the terminal. */
export function parseWatchArgs(argv: readonly string[], env = process.env): WatchOptions {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      transport: { type: 'string', short: 't', default: 'sse' },
      url: { type: 'string', short: 'u' },
      token: { type: 'string' },
      'token-file': { type: 'string' },
      after: { type: 'string', default: '0' },
    },
  });
  if (positionals.length !== 1) throw new Error('exactly one order id is required');
  const transport = values.transport as Transport;
  if (!TRANSPORTS.includes(transport)) {
    throw new Error(`--transport must be one of ${TRANSPORTS.join(', ')}`);
  }
  const after = Number(values.after);
  if (!Number.isSafeInteger(after) || after < 0) throw new Error('--after must be an integer >= 0');
  const tokenFile = values['token-file'];
  if (tokenFile !== undefined && values.token !== undefined) {
    throw new Error('give --token or --token-file, not both');
  }
  const token =
    tokenFile !== undefined ? readToken(tokenFile) : (values.token ?? env.ORDER_STATUS_TOKEN);
  return {
    orderId: parseOrderId(positionals[0]),
    transport,
    url: values.url ?? (transport === 'grpc' ? DEFAULT_GRPC_ADDRESS : DEFAULT_HTTP_URL),
    after,
    ...(token ? { token } : {}),
    ...(tokenFile !== undefined ? { tokenFile } : {}),
  };
}

/** The token in `path` (surrounding whitespace and a trailing newline removed). */
export function readToken(path: string): string {
  return readFileSync(path, 'utf8').trim();
}
