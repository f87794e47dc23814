import type { Connect } from './connection';
import { longPollConnect, sseConnect } from './http-transports';
import { parseWatchArgs, USAGE, type Transport, type WatchOptions } from './options';
import { grpcConnect, wsConnect } from './socket-transports';
import { watch } from './watcher';

/**
 * `npm run watch -- <orderId> --transport grpc|sse|ws|longpoll [--url ...] [--token ...]`:
 * a terminal client of the service. It is an outside client: it knows the wire contract
 * (@app/contracts and the proto), never the service's internals.
 */
const CONNECTORS: Record<Transport, (o: WatchOptions) => Connect> = {
  grpc: grpcConnect,
  sse: sseConnect,
  ws: wsConnect,
  longpoll: longPollConnect,
};

async function main(): Promise<number> {
  let options: WatchOptions;
  try {
    options = parseWatchArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}\n`);
    return 2;
  }
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  process.once('SIGTERM', () => abort.abort());
  await watch(
    CONNECTORS[options.transport](options),
    options,
    { line: (text) => process.stdout.write(`${text}\n`) },
    abort.signal,
  );
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
