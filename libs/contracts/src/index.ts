export * from './order-status';
export * from './order-events';
export * from './gateway-error';
export * from './validation';
export * from './publish-status.dto';
export * from './subscribe.dto';
export * from './proto-codec';
export * from './proto-path';
