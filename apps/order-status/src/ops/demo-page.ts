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
 * The demo page at `/` and its assets (including the socket.io client bundle, vendored
 * in public/vendor: no CDN), through @fastify/static. API routes are matched first; the
 * static wildcard only answers what no controller does.
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
  });
}
