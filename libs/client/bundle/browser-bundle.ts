import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = join(__dirname, '..', '..', '..');

/** The demo page loads it as `/assets/order-status-client.js` (no CDN, no build at run time). */
export const BROWSER_BUNDLE_PATH = join(
  ROOT,
  'apps',
  'order-status',
  'public',
  'assets',
  'order-status-client.js',
);

/** The global the bundle defines: `OrderStatusClient.watchOrder(...)`. */
export const BROWSER_GLOBAL = 'OrderStatusClient';

/**
 * The browser build of libs/client: the browser entry (SSE, socket.io, long-poll; no
 * gRPC), socket.io-client included, minified into one IIFE. Deterministic for one
 * esbuild version, so a unit test can tell a stale committed bundle.
 */
export async function buildBrowserBundle(): Promise<string> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, 'libs', 'client', 'src', 'index.ts')],
    tsconfig: join(ROOT, 'tsconfig.json'),
    bundle: true,
    minify: true,
    format: 'iife',
    globalName: BROWSER_GLOBAL,
    platform: 'browser',
    // Browsers of the last few years (async iteration, optional chaining, AbortSignal).
    target: ['es2020'],
    legalComments: 'none',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

/** `npm run build:client`: writes the bundle and prints its size. */
async function main(): Promise<void> {
  const code = await buildBrowserBundle();
  writeFileSync(BROWSER_BUNDLE_PATH, code);
  const gz = gzipSync(code, { level: 9 }).length;
  process.stdout.write(
    `${BROWSER_BUNDLE_PATH}: ${code.length} bytes minified, ${gz} bytes minified+gzipped\n`,
  );
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  });
}
