export * from './redis-keys';
export * from './redis-store-options';
export * from './redis-stream-store';
export * from './redis-client';
export * from './auth-state';
