import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { generateDtsBundle } from 'dts-bundle-generator';
import { build, type BuildOptions } from 'esbuild';
import {
  BASE_OPTIONS,
  BROWSER_ENTRY,
  BROWSER_TARGET,
  CLIENT_DIR,
  NODE_ENTRY,
  NODE_TARGET,
  ROOT,
  RXJS_ENTRY,
} from './build-options';

/** What `npm pack` ships besides package.json and README.md (package.json `files`). */
export const PACKAGE_DIST = join(CLIENT_DIR, 'dist');

/** The package's `exports` targets, relative to libs/client. */
export const PACKAGE_FILES = {
  browser: 'dist/browser.mjs',
  node: 'dist/node.mjs',
  types: 'dist/index.d.mts',
  rxjs: 'dist/rxjs.mjs',
  rxjsTypes: 'dist/rxjs.d.mts',
  /** The contract's folder: the envelope the gRPC transport loads and the file it imports. */
  proto: 'dist/proto',
} as const;

interface PackageJson {
  readonly peerDependencies: Record<string, string>;
}

/**
 * The peers stay imports (the team's copy, one version per app); everything else the
 * library imports, libs/contracts and libs/order-domain included, is bundled in, so no
 * `@app/*` alias is left.
 */
function peers(): string[] {
  const pkg = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8')) as PackageJson;
  return Object.keys(pkg.peerDependencies);
}

/**
 * `require` and `__dirname` for the CommonJS habits the sources keep (`require.resolve` of
 * an optional peer, contracts' proto lookup that walks up from `__dirname`), defined from
 * `import.meta.url` in each ES module of the Node build (Node's documented equivalents).
 */
const NODE_ESM_BANNER = [
  "import { createRequire as __createRequire } from 'node:module';",
  "import { dirname as __dirnameOf } from 'node:path';",
  "import { fileURLToPath as __fileURLToPath } from 'node:url';",
  'const require = __createRequire(import.meta.url);',
  'const __dirname = __dirnameOf(__fileURLToPath(import.meta.url));',
].join('\n');

function packageOptions(external: string[]): BuildOptions {
  return {
    ...BASE_OPTIONS,
    external,
    format: 'esm',
    outdir: PACKAGE_DIST,
    outExtension: { '.js': '.mjs' },
    write: true,
  };
}

/**
 * Builds libs/client/dist: the ESM entry for browsers (and bundlers), the ESM entry for
 * Node with gRPC in a chunk of its own (loaded on first use, so its peers are optional),
 * one `.d.mts` for both, and the proto the gRPC transport loads. Run by `prepack`.
 */
export async function buildPackage(): Promise<void> {
  rmSync(PACKAGE_DIST, { recursive: true, force: true });
  const external = peers();
  await build({
    ...packageOptions(external),
    // The RxJS face needs nothing of a platform: rxjs and the watch it is given.
    entryPoints: { browser: BROWSER_ENTRY, rxjs: RXJS_ENTRY },
    platform: 'browser',
    target: [BROWSER_TARGET],
  });
  await build({
    ...packageOptions(external),
    entryPoints: { node: NODE_ENTRY },
    platform: 'node',
    target: [NODE_TARGET],
    // An import() of gRPC becomes its own file, so its static imports of the peers run
    // only when a watch asks for gRPC.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    banner: { js: NODE_ESM_BANNER },
  });
  // The `@app/*` aliases resolved and the order domain's types inlined: one self-contained file.
  const output = { noBanner: true, exportReferencedTypes: true };
  const [types, rxjsTypes] = generateDtsBundle(
    [
      { filePath: NODE_ENTRY, output },
      { filePath: RXJS_ENTRY, output, libraries: { importedLibraries: ['rxjs'] } },
    ],
    { preferredConfigPath: join(CLIENT_DIR, 'tsconfig.lib.json') },
  );
  writeFileSync(join(CLIENT_DIR, PACKAGE_FILES.types), types);
  writeFileSync(join(CLIENT_DIR, PACKAGE_FILES.rxjsTypes), rxjsTypes);
  const proto = join(CLIENT_DIR, PACKAGE_FILES.proto);
  mkdirSync(proto, { recursive: true });
  const contract = join(ROOT, 'proto');
  for (const file of readdirSync(contract).filter((name) => name.endsWith('.proto'))) {
    copyFileSync(join(contract, file), join(proto, file));
  }
}

if (require.main === module) {
  buildPackage().then(
    () => process.stdout.write(`built ${relative(ROOT, PACKAGE_DIST)}\n`),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
