export * from './redis-keys';
export * from './redis-store-options';
export * from './redis-order-store';
export * from './redis-client';
export * from './auth-state';
