import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

const PROTO_RELATIVE = join('proto', 'order_status.proto');

/**
 * Finds proto/order_status.proto (the envelope; it imports the domain's file beside it) by
 * walking up from this file, so the same code works from the TypeScript sources, the
 * webpack bundle in dist/ and the load test, whatever the working directory.
 */
function findProto(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const candidate = join(dir, PROTO_RELATIVE);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new Error(`${PROTO_RELATIVE} not found above ${__dirname}`);
  }
}

/** The service's contract: the envelope, which imports the domain's file beside it. */
export const ORDER_STATUS_PROTO_PATH = findProto();
/** The folder of every .proto file of the contract (what a copy of the contract takes). */
export const PROTO_DIR = dirname(ORDER_STATUS_PROTO_PATH);
export const ORDER_STATUS_PROTO_PACKAGE = 'orderstatus.v1';
export const ORDER_STATUS_SERVICE_NAME = 'OrderStatusService';

/** proto-loader options shared by the server and every client, so both see the same shapes. */
export const PROTO_LOADER_OPTIONS = {
  keepCase: false,
  longs: Number,
  enums: Number,
  defaults: true,
  oneofs: true,
} as const;
