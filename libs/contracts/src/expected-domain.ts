import { ErrorCode, GatewayError } from './gateway-error';

/**
 * Where a subscriber names the domain it decodes: the query parameter of SSE, long-poll
 * and the raw WebSocket, and the field of the socket.io `subscribe` message.
 */
export const EXPECTED_DOMAIN_PARAM = 'domain';
/** The same on gRPC: a metadata key of the Subscribe call (no proto field, so no message changes). */
export const EXPECTED_DOMAIN_METADATA = 'stream-domain';

/** A domain's name (`StreamDomain.name`): one lower-case word. */
export const DOMAIN_NAME_PATTERN = /^[a-z][a-z0-9]{0,31}$/;

const MISMATCH = /stream domain mismatch: this service streams '([a-z0-9]+)', not '([a-z0-9]+)'/;

/** The two domains of a mismatch, as its refusal's message names them. */
export interface DomainMismatch {
  readonly served: string;
  readonly expected: string;
}

/**
 * Decides whether a subscriber may open a stream of the `served` domain: a client that
 * names no domain (undefined) or the served one may; one that names another is refused
 * with FailedPrecondition naming both, since it would ignore every event it got.
 * @throws GatewayError InvalidArgument for a value that is not a domain name (a repeated
 *   parameter included), FailedPrecondition for another domain's name
 */
export function checkExpectedDomain(served: string, expected: unknown): void {
  if (expected === undefined || expected === served) return;
  if (typeof expected !== 'string' || !DOMAIN_NAME_PATTERN.test(expected)) {
    throw new GatewayError(
      ErrorCode.InvalidArgument,
      `${EXPECTED_DOMAIN_PARAM} must be one domain name matching ${DOMAIN_NAME_PATTERN.source}`,
    );
  }
  throw new GatewayError(
    ErrorCode.FailedPrecondition,
    `stream domain mismatch: this service streams '${served}', not '${expected}'`,
  );
}

/** The domains a refusal's message names (whatever a transport appended), else undefined. */
export function domainMismatchOf(message: string): DomainMismatch | undefined {
  const m = MISMATCH.exec(message);
  return m === null ? undefined : { served: m[1], expected: m[2] };
}
