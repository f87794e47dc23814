import { ErrorCode, GatewayError } from './gateway-error';

/** Order ids: 1-64 characters of [A-Za-z0-9_-], starting with a letter or digit. */
export const ORDER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const ORDER_ID_MAX_LENGTH = 64;

/**
 * Owner (customer) ids are token subjects: 1-128 visible ASCII characters, no spaces
 * (identity providers use forms like `auth0|123` or `user@example.com`).
 */
export const OWNER_ID_PATTERN = /^[\x21-\x7E]{1,128}$/;

export function isValidOrderId(value: unknown): value is string {
  return typeof value === 'string' && ORDER_ID_PATTERN.test(value);
}

export function parseOrderId(value: unknown): string {
  if (!isValidOrderId(value)) {
    throw new GatewayError(
      ErrorCode.InvalidArgument,
      `orderId must match ${ORDER_ID_PATTERN.source} (1-${ORDER_ID_MAX_LENGTH} characters)`,
    );
  }
  return value;
}

// 16 digits reach Number.MAX_SAFE_INTEGER; the safe-integer check below rejects the rest.
const DIGITS = /^\d{1,16}$/;

/**
 * Parses a resume cursor (`after`, `Last-Event-ID`, `afterSeq`): a non-negative integer,
 * given as a number or a string of digits. Absent means 0 (from the start of retention).
 * Anything else is an InvalidArgument naming `name`, never a silent 0.
 */
export function parseSeq(value: unknown, name: string): number {
  if (value === undefined || value === null || value === '') return 0;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && DIGITS.test(value) && Number.isSafeInteger(Number(value))) {
    return Number(value);
  }
  throw new GatewayError(ErrorCode.InvalidArgument, `${name} must be a non-negative integer`);
}
