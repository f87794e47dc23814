// Two projects: fast unit specs beside the source, and e2e specs under test/ that start
// real servers on port 0. SWC strips types (tsc --noEmit type-checks separately) and
// emits decorator metadata, which Nest's DI needs.
const { join, posix } = require('node:path');
const ts = require('typescript');

const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
  },
];
// The `@app/*` aliases are declared once, in tsconfig.json's `paths`: tsc, tsx, madge, the
// Nest build (Rspack, given the app's tsconfig, which extends this one) and the client
// bundle (esbuild) read them there, and Jest gets the same map from it
// (test/tooling/path-aliases.e2e-spec.ts checks both).
function moduleNameMapperFromTsconfig(file) {
  const { config, error } = ts.readConfigFile(file, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const { baseUrl = '.', paths = {} } = config.compilerOptions ?? {};
  // TypeScript's one `*` wildcard becomes a capture group, its value `$1`.
  const pattern = (alias) =>
    `^${alias.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace('*', '(.*)')}$`;
  const target = (to) => posix.join('<rootDir>', baseUrl, to).replace('*', '$1');
  return Object.fromEntries(
    Object.entries(paths).map(([alias, targets]) => [pattern(alias), targets.map(target)]),
  );
}
const moduleNameMapper = {
  ...moduleNameMapperFromTsconfig(join(__dirname, 'tsconfig.json')),
  // A relative `import('./x.js')` (an ES import needs the extension under node16
  // resolution) is the TypeScript file `./x.ts` here, as tsc, tsx and esbuild resolve it.
  '^(\\.{1,2}/.+)\\.js$': '$1',
};
// NestJS 12 (@nestjs/*), jose 6, cookie 2 (loaded by @fastify/cookie with a dynamic import)
// content-disposition (required by @fastify/static) and eventsource-parser 4 (the SSE
// parser of the tests and the load test) ship ESM only;
// Jest (below Node 24.9) can neither require() ESM nor run import() without VM modules,
// so SWC compiles them to CommonJS for the tests, on every Node the suite runs on (one
// module system under test). Node loads them natively (require(esm), Node 20.19+).
const swcEsm = ['@swc/jest', { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' } }];
const ESM_PACKAGES = '@nestjs|jose|@fastify/cookie|cookie|content-disposition|eventsource-parser';
// The OTLP exporter's CommonJS build loads `http` with import(), which Jest cannot run
// either: SWC turns that import() into a require() for the tests (Node runs it as is).
const DYNAMIC_IMPORT_CJS = '@opentelemetry/otlp-exporter-base';
const common = {
  transform: {
    '^.+\\.ts$': swc,
    [`/node_modules/(${ESM_PACKAGES})/.+\\.js$`]: swcEsm,
    [`/node_modules/${DYNAMIC_IMPORT_CJS}/.+\\.cjs$`]: swcEsm,
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_PACKAGES}|${DYNAMIC_IMPORT_CJS})/)`],
  moduleNameMapper,
  testEnvironment: 'node',
};

module.exports = {
  // One worker process (Jest's default here, one core less than the machine's two), recycled
  // between spec files once its heap passes this: in band, one process held every spec's
  // modules and grew past 2 GB, and full collections (the heap-weighing specs make many)
  // slowed every later spec.
  workerIdleMemoryLimit: '512MB',
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/{apps,libs,loadtest}/**/*.spec.ts'],
      // A bound for a hang, not a speed check: CI runs two Jest runs and an image build on
      // two cores, where CPU-bound cases have passed Jest's 5 s default.
      testTimeout: 15_000,
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/jest-setup.ts'],
    },
  ],
};
