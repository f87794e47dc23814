import { ErrorCode, GatewayError } from './gateway-error';
import {
  IDEMPOTENCY_KEY_MAX_LENGTH,
  parseIdempotencyKey,
  scopedIdempotencyKey,
} from './idempotency-key';

describe('parseIdempotencyKey', () => {
  it.each([
    '8e03978e-40d5-43e8-bc93-6894a57f9324',
    '01HZY3V6Q9M8R2XK4T7B5N0C1D',
    'aGVsbG8+/w==',
    'order-1:attempt.2_~',
    'k'.repeat(IDEMPOTENCY_KEY_MAX_LENGTH),
  ])('accepts %s', (key) => {
    expect(parseIdempotencyKey(key, 'Idempotency-Key')).toBe(key);
  });

  it('takes absence as no key, and a quoted structured-field string as its content', () => {
    expect(parseIdempotencyKey(undefined, 'Idempotency-Key')).toBeUndefined();
    expect(parseIdempotencyKey('"abc-1"', 'Idempotency-Key')).toBe('abc-1');
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(IDEMPOTENCY_KEY_MAX_LENGTH + 1)],
    ['spaces', 'a b'],
    ['a comma (two headers joined)', 'a, b'],
    ['quotes only', '""'],
    ['a quote inside', '"a"b"'],
    ['non-ASCII', 'clé'],
    ['control characters', 'a\nb'],
    ['a number', 42],
    ['an array', ['a', 'b']],
  ])('refuses %s with InvalidArgument naming the field, never echoing the value', (_w, value) => {
    let err: unknown;
    try {
      parseIdempotencyKey(value, 'request_id');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe(ErrorCode.InvalidArgument);
    expect((err as GatewayError).message).toMatch(/^request_id must be/);
    if (typeof value === 'string' && value.length > 3) {
      expect((err as GatewayError).message).not.toContain(value);
    }
  });
});

describe('scopedIdempotencyKey', () => {
  it('never lets two subject/key pairs collide', () => {
    expect(scopedIdempotencyKey('a:b', 'c')).not.toBe(scopedIdempotencyKey('a', 'b:c'));
    expect(scopedIdempotencyKey('alice', 'k')).not.toBe(scopedIdempotencyKey('bob', 'k'));
  });
});
