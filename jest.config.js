// Two projects: fast unit specs beside the source, and e2e specs under test/ that start
// real servers on port 0. SWC strips types (tsc --noEmit type-checks separately) and
// emits decorator metadata, which Nest's DI needs.
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
const moduleNameMapper = {
  '^@app/contracts(|/.*)$': '<rootDir>/libs/contracts/src$1',
  '^@app/event-bus(|/.*)$': '<rootDir>/libs/event-bus/src$1',
  '^@app/redis-store(|/.*)$': '<rootDir>/libs/redis-store/src$1',
  '^@app/auth(|/.*)$': '<rootDir>/libs/auth/src$1',
  '^@app/client(|/.*)$': '<rootDir>/libs/client/src$1',
};
// NestJS 12 (@nestjs/*), jose 6, cookie 2 (loaded by @fastify/cookie with a dynamic import)
// content-disposition (required by @fastify/static) and eventsource-parser 4 (the SSE
// parser of the tests and the load test) ship ESM only;
// Jest (below Node 24.9) can neither require() ESM nor run import() without VM modules,
// so SWC compiles them to CommonJS for the tests, on every Node the suite runs on (one
// module system under test). Node loads them natively (require(esm), Node 20.19+).
const swcEsm = ['@swc/jest', { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' } }];
const ESM_PACKAGES = '@nestjs|jose|@fastify/cookie|cookie|content-disposition|eventsource-parser';
const common = {
  transform: {
    '^.+\\.ts$': swc,
    [`/node_modules/(${ESM_PACKAGES})/.+\\.js$`]: swcEsm,
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_PACKAGES})/)`],
  moduleNameMapper,
  testEnvironment: 'node',
};

module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,loadtest}/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/jest-setup.ts'],
    },
  ],
};
