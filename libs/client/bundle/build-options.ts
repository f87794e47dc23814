import { join } from 'node:path';
import type { BuildOptions } from 'esbuild';

/** The repository root (tsconfig.json, its `@app/*` aliases, proto/). */
export const ROOT = join(__dirname, '..', '..', '..');

/** libs/client: the package's folder (package.json, README.md, dist/ once built). */
export const CLIENT_DIR = join(__dirname, '..');

/** The browser entry (SSE, socket.io, long-poll) and the Node entry (the same plus gRPC). */
export const BROWSER_ENTRY = join(CLIENT_DIR, 'src', 'index.ts');
export const NODE_ENTRY = join(CLIENT_DIR, 'src', 'node.ts');

/** The RxJS face (`@order-status/client/rxjs`): `toObservable(watch)`, rxjs an optional peer. */
export const RXJS_ENTRY = join(CLIENT_DIR, 'src', 'rxjs.ts');

/** Browsers of the last few years (async iteration, optional chaining, AbortSignal). */
export const BROWSER_TARGET = 'es2020';

/** The oldest Node the package supports (package.json `engines`). */
export const NODE_TARGET = 'node22.12';

/**
 * What every build of the library shares: the `@app/*` aliases resolved from tsconfig.json
 * (so libs/contracts and libs/order-domain are bundled in), in memory, quiet. Deterministic for one esbuild
 * version, so the bundle spec can tell a stale committed bundle.
 */
export const BASE_OPTIONS: BuildOptions = {
  absWorkingDir: ROOT,
  tsconfig: join(ROOT, 'tsconfig.json'),
  bundle: true,
  legalComments: 'none',
  write: false,
  logLevel: 'silent',
};
