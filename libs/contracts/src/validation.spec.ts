import fc from 'fast-check';
import { ErrorCode, GatewayError } from './gateway-error';
import { isValidOrderId, ORDER_ID_MAX_LENGTH, parseOrderId, parseSeq } from './validation';

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

function expectInvalidArgument(fn: () => unknown, name: string): void {
  const err = caught(fn);
  expect(err).toBeInstanceOf(GatewayError);
  expect((err as GatewayError).code).toBe(ErrorCode.InvalidArgument);
  expect((err as GatewayError).message).toContain(name);
}

const idChar = fc.constantFrom(
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-'.split(''),
);
const alnum = fc.constantFrom(
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.split(''),
);
const validId = fc
  .tuple(alnum, fc.array(idChar, { maxLength: ORDER_ID_MAX_LENGTH - 1 }))
  .map(([first, rest]) => first + rest.join(''));

describe('parseOrderId', () => {
  it('returns every id of 1-64 characters of [A-Za-z0-9_-] starting with a letter or digit', () => {
    fc.assert(
      fc.property(validId, (id) => {
        expect(isValidOrderId(id)).toBe(true);
        expect(parseOrderId(id)).toBe(id);
      }),
    );
  });

  it.each([
    ['empty', ''],
    ['too long', 'a'.repeat(ORDER_ID_MAX_LENGTH + 1)],
    ['leading dash', '-abc'],
    ['leading underscore', '_abc'],
    ['slash', 'a/b'],
    ['dot', 'a.b'],
    ['space', 'a b'],
    ['trailing newline', 'abc\n'],
    ['non-ASCII letter', 'caf\u00e9'],
    ['number', 42],
    ['undefined', undefined],
    ['null', null],
    ['array', ['abc']],
  ])('rejects %s with InvalidArgument naming orderId', (_label, value) => {
    expect(isValidOrderId(value)).toBe(false);
    expectInvalidArgument(() => parseOrderId(value), 'orderId');
  });

  it('accepts exactly 64 characters', () => {
    expect(parseOrderId('a'.repeat(64))).toHaveLength(64);
  });

  it('rejects any string holding a character outside the alphabet', () => {
    fc.assert(
      fc.property(
        validId,
        fc.string({ minLength: 1, maxLength: 1 }).filter((c) => !/[A-Za-z0-9_-]/.test(c)),
        fc.nat(),
        (id, bad, at) => {
          const i = at % (id.length + 1);
          const value = id.slice(0, i) + bad + id.slice(i);
          expectInvalidArgument(() => parseOrderId(value), 'orderId');
        },
      ),
    );
  });
});

describe('parseSeq', () => {
  it.each([undefined, null, ''])('treats %p as 0 (from the start of retention)', (value) => {
    expect(parseSeq(value, 'after')).toBe(0);
  });

  it('accepts every non-negative safe integer, as a number or as its digits', () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), (n) => {
        expect(parseSeq(n, 'after')).toBe(n);
        expect(parseSeq(String(n), 'after')).toBe(n);
      }),
    );
    expect(parseSeq(Number.MAX_SAFE_INTEGER, 'after')).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseSeq(String(Number.MAX_SAFE_INTEGER), 'after')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('accepts leading zeros in digit strings', () => {
    expect(parseSeq('007', 'after')).toBe(7);
    expect(parseSeq('0', 'after')).toBe(0);
  });

  it.each([
    ['negative number', -1],
    ['fraction', 1.5],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['unsafe integer', Number.MAX_SAFE_INTEGER + 1],
    ['negative string', '-1'],
    ['signed string', '+1'],
    ['decimal string', '1.0'],
    ['exponent string', '1e3'],
    ['hex string', '0x10'],
    ['padded string', ' 1'],
    ['trailing newline', '1\n'],
    ['unsafe digit string', '9007199254740992'],
    ['very long digit string', '1'.repeat(30)],
    ['non-ASCII digits', '\u0661\u0662'],
    ['word', 'abc'],
    ['boolean', true],
    ['array', [1]],
    ['object', { seq: 1 }],
  ])('rejects %s with InvalidArgument naming the parameter', (_label, value) => {
    expectInvalidArgument(() => parseSeq(value, 'Last-Event-ID'), 'Last-Event-ID');
  });

  it('rejects any string that is not all ASCII digits', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((s) => !/^[0-9]+$/.test(s)),
        (s) => {
          expectInvalidArgument(() => parseSeq(s, 'afterSeq'), 'afterSeq');
        },
      ),
    );
  });

  it('never returns anything but a non-negative safe integer', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        let out: number | undefined;
        try {
          out = parseSeq(value, 'after');
        } catch (err) {
          expect(err).toBeInstanceOf(GatewayError);
          return;
        }
        expect(Number.isSafeInteger(out)).toBe(true);
        expect(out).toBeGreaterThanOrEqual(0);
      }),
    );
  });
});
