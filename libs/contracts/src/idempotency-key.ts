import { ErrorCode, GatewayError } from './gateway-error';

/**
 * A publisher's idempotency key (HTTP `Idempotency-Key`, gRPC `request_id`): 1-128
 * characters that cover UUIDs, ULIDs, base64/base64url and `name:counter` forms. Bounded
 * so a key costs the store a known amount whatever the client sends.
 */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._~:+/=-]{1,128}$/;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 128;

/**
 * Validates a key. `undefined` means "no key"; anything else must match
 * IDEMPOTENCY_KEY_PATTERN, else an InvalidArgument naming `name` (the message never
 * repeats the value: it may be huge or hostile). The draft standard's form, a quoted
 * structured-field string (`"8e03978e-..."`, draft-ietf-httpapi-idempotency-key-header
 * section 2), is accepted beside the bare token most clients send.
 */
export function parseIdempotencyKey(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  const unquoted =
    typeof value === 'string' && value.length > 2 && value.startsWith('"') && value.endsWith('"')
      ? value.slice(1, -1)
      : value;
  if (typeof unquoted === 'string' && IDEMPOTENCY_KEY_PATTERN.test(unquoted)) return unquoted;
  throw new GatewayError(
    ErrorCode.InvalidArgument,
    `${name} must be 1-${IDEMPOTENCY_KEY_MAX_LENGTH} characters of [A-Za-z0-9._~:+/=-]`,
  );
}

/**
 * The key the store remembers: the caller's own key scoped to who sent it, so two
 * publishers that happen to choose the same key never receive each other's events (the
 * store scopes it to the order). Length-prefixed, so no subject/key pair can collide with
 * another.
 */
export function scopedIdempotencyKey(subject: string, key: string): string {
  return `${subject.length}:${subject}:${key}`;
}

/**
 * A key repeated with a request other than the one it was first used for: the key names
 * one request, and what that request did cannot change. HTTP answers 422
 * (draft-ietf-httpapi-idempotency-key-header section 2.7); gRPC, which has no such
 * status, FAILED_PRECONDITION (the code's own table).
 */
export class IdempotencyKeyReused extends GatewayError {
  /** Read by the HTTP error filter, which keeps an error's own 4xx over the table's. */
  readonly statusCode = 422;

  constructor(message: string) {
    super(ErrorCode.FailedPrecondition, message);
  }
}
