export * from './stream-store';
export * from './event-feed';
export * from './in-memory-stream-store';
export * from './publish-replay';
export * from './idempotency-cache';
export * from './append-event';
export * from './trace-context';
