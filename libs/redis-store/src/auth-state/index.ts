export * from './auth-state-keys';
export * from './redis-auth-state';
export * from './redis-connection-limiter';
export * from './redis-stream-tickets';
export * from './redis-throttler-storage';
