export * from './payload-domain';
export * from './payload-events';
export * from './payload-proto-codec';
