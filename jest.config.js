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
};
const common = { transform: { '^.+\\.ts$': swc }, moduleNameMapper, testEnvironment: 'node' };

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
