import { checkExpectedDomain, domainMismatchOf } from './expected-domain';
import { ErrorCode, GatewayError } from './gateway-error';

function refusal(served: string, expected: unknown): GatewayError | undefined {
  try {
    checkExpectedDomain(served, expected);
    return undefined;
  } catch (err) {
    return err as GatewayError;
  }
}

describe('checkExpectedDomain', () => {
  it('lets a subscriber that names no domain, or the served one, through', () => {
    expect(refusal('order', undefined)).toBeUndefined();
    expect(refusal('order', 'order')).toBeUndefined();
  });

  it('refuses another domain with failed_precondition, whose message names both', () => {
    const err = refusal('payload', 'order');
    expect(err).toBeInstanceOf(GatewayError);
    expect(err?.code).toBe(ErrorCode.FailedPrecondition);
    // A transport appends what it said; the client still reads both names.
    expect(domainMismatchOf(`${err?.message} (HTTP 409)`)).toEqual({
      served: 'payload',
      expected: 'order',
    });
  });

  it.each([[''], ['Order'], ['or der'], [7], [['order', 'order']], ['x'.repeat(33)]])(
    'refuses %p, which is not one domain name, with invalid_argument',
    (value) => {
      expect(refusal('order', value)?.code).toBe(ErrorCode.InvalidArgument);
    },
  );

  it('reads no mismatch in another message', () => {
    expect(domainMismatchOf('order-1 is delivered (HTTP 409)')).toBeUndefined();
  });
});
