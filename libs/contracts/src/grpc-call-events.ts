/**
 * The event a grpc-js server call emits when the client cancels it, its deadline passes
 * or its HTTP/2 stream is reset (grpc-js `ServerWritableStreamImpl`): named once here.
 */
export const GRPC_CALL_CANCELLED = 'cancelled';
