import { loadDomain } from './domains';
import { parseWatchArgs, USAGE, type WatchOptions } from './options';
import { watch } from './watcher';

/**
 * Exit codes: finished or interrupted, bad usage, refused for good by the service, never
 * connected within --connect-timeout, the service streams another domain than --domain.
 */
const EXIT_OK = 0;
const EXIT_USAGE = 2;
const EXIT_REFUSED = 3;
const EXIT_UNREACHABLE = 4;
const EXIT_WRONG_DOMAIN = 5;

/**
 * `npm run watch -- <streamId> [--domain order|payload|...] --transport grpc|sse|ws|websocket|longpoll [--url ...] [--token-file ...]`:
 * a terminal client of the service, on the client library. It is an outside client: it
 * knows the wire contract (@app/contracts, @app/client, the domains' descriptors), never
 * the service's internals.
 */
async function main(): Promise<number> {
  let options: WatchOptions;
  try {
    options = parseWatchArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}\n`);
    return EXIT_USAGE;
  }
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  process.once('SIGTERM', () => abort.abort());
  const domain = await loadDomain(options.domain);
  const { end, neverConnected } = await watch(
    options,
    domain,
    {
      line: (text) => process.stdout.write(`${text}\n`),
      error: (text) => process.stderr.write(`${text}\n`),
    },
    abort.signal,
  );
  if (neverConnected) return EXIT_UNREACHABLE;
  if (end.reason !== 'error') return EXIT_OK;
  return end.error.domainMismatch !== undefined ? EXIT_WRONG_DOMAIN : EXIT_REFUSED;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
