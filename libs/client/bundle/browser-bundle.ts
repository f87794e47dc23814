import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build, type BuildOptions } from 'esbuild';
import { BASE_OPTIONS, BROWSER_ENTRY, BROWSER_TARGET, ROOT } from './build-options';
import { PAGE_DOMAIN_PATH, pageDomainScript } from './page-domain';

const ASSETS_DIR = join(ROOT, 'apps', 'order-status', 'public', 'assets');

/** The demo page loads it as `/assets/order-status-client.js` (no CDN, no build at run time). */
export const BROWSER_BUNDLE_PATH = join(ASSETS_DIR, 'order-status-client.js');

/** The same as an ES module, for pages of other origins: `import { watchOrder } from '…/assets/order-status-client.mjs'`. */
export const BROWSER_MODULE_PATH = join(ASSETS_DIR, 'order-status-client.mjs');

/** Both builds the service serves, each with its `.br` and `.gz` beside it. */
export const SERVED_BUNDLE_PATHS = [BROWSER_BUNDLE_PATH, BROWSER_MODULE_PATH] as const;

/** The global the IIFE defines: `OrderStatusClient.watchOrder(...)`. */
export const BROWSER_GLOBAL = 'OrderStatusClient';

/**
 * The browser entry (SSE, socket.io, long-poll; no gRPC), socket.io-client included,
 * minified and self-contained, so a page needs nothing else: no bundler, no import map.
 */
const SERVED_OPTIONS: BuildOptions = {
  ...BASE_OPTIONS,
  entryPoints: [BROWSER_ENTRY],
  minify: true,
  platform: 'browser',
  target: [BROWSER_TARGET],
};

async function buildText(options: BuildOptions): Promise<string> {
  const result = await build(options);
  if (!result.outputFiles || result.outputFiles.length !== 1) {
    throw new Error('esbuild: expected exactly one output file');
  }
  return result.outputFiles[0].text;
}

/** The IIFE for the demo page: a global `OrderStatusClient`. */
export function buildBrowserBundle(): Promise<string> {
  return buildText({ ...SERVED_OPTIONS, format: 'iife', globalName: BROWSER_GLOBAL });
}

/** The ES module for other origins' pages (served with CORS, see docs/security.md). */
export function buildBrowserModule(): Promise<string> {
  return buildText({ ...SERVED_OPTIONS, format: 'esm' });
}

/**
 * The encodings the service serves the bundles in (@fastify/static `preCompressed`),
 * prebuilt at their highest levels: compressed once here instead of on every request.
 */
export function compressed(code: string): { br: Buffer; gz: Buffer } {
  const input = Buffer.from(code);
  return {
    br: brotliCompressSync(input, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: input.length,
      },
    }),
    gz: gzipSync(input, { level: constants.Z_BEST_COMPRESSION }),
  };
}

/**
 * `npm run build:client`: writes both builds and their compressed forms, prints the sizes,
 * and the demo page's domain descriptor.
 */
async function main(): Promise<void> {
  writeFileSync(PAGE_DOMAIN_PATH, pageDomainScript());
  const builds = [
    [BROWSER_BUNDLE_PATH, await buildBrowserBundle()],
    [BROWSER_MODULE_PATH, await buildBrowserModule()],
  ] as const;
  for (const [path, code] of builds) {
    const { br, gz } = compressed(code);
    writeFileSync(path, code);
    writeFileSync(`${path}.br`, br);
    writeFileSync(`${path}.gz`, gz);
    process.stdout.write(
      `${path}: ${code.length} bytes minified, ${gz.length} gzip, ${br.length} brotli\n`,
    );
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  });
}
