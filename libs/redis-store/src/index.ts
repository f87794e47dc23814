export * from './redis-keys';
export * from './redis-store-options';
export * from './redis-order-store';
