// Nest CLI webpack hook. TypeScript 6 resolves the `@app/*` path aliases without
// `baseUrl`, which tsconfig-paths-webpack-plugin does not understand yet, so the aliases
// are given to webpack directly (same table as tsconfig.json "paths").
const path = require('node:path');

module.exports = (options) => ({
  ...options,
  resolve: {
    ...options.resolve,
    alias: {
      ...(options.resolve && options.resolve.alias),
      '@app/contracts': path.resolve(__dirname, 'libs/contracts/src'),
      '@app/event-bus': path.resolve(__dirname, 'libs/event-bus/src'),
      '@app/redis-store': path.resolve(__dirname, 'libs/redis-store/src'),
      '@app/auth': path.resolve(__dirname, 'libs/auth/src'),
    },
  },
});
