import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';

const PUBLIC_RELATIVE = join('apps', 'order-status', 'public');

/**
 * Finds apps/order-status/public by walking up from this file, so the same code serves
 * it from the TypeScript sources (tests) and from the webpack bundle in dist/.
 */
export function publicDir(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const candidate = join(dir, PUBLIC_RELATIVE);
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    if (dirname(dir) === dir) throw new Error(`${PUBLIC_RELATIVE} not found above ${__dirname}`);
  }
}

/**
 * The client library's browser builds (libs/client, `npm run build:client`): the IIFE the
 * demo page loads and the ES module other origins' pages import. They get the library
 * header set (http/security-headers.ts), which lets other origins load them.
 */
export const CLIENT_LIBRARY_PATHS: ReadonlySet<string> = new Set([
  '/assets/order-status-client.js',
  '/assets/order-status-client.mjs',
]);

/**
 * The demo page at `/` and its assets (the client library's bundle with socket.io-client
 * included: no CDN), through @fastify/static. API routes are matched first; the static
 * wildcard only answers what no controller does. A file with a prebuilt `.br` or `.gz`
 * beside it is sent in the encoding the request accepts (`Vary: accept-encoding`), with
 * that file's own ETag: compressed once at build time, never per request.
 */
export function serveDemoPage(app: NestFastifyApplication): void {
  app.useStaticAssets({
    root: publicDir(),
    prefix: '/',
    index: ['index.html'],
    // Small files, changed with the service: revalidate, never serve a stale page.
    cacheControl: true,
    maxAge: 0,
    etag: true,
    preCompressed: true,
  });
}
