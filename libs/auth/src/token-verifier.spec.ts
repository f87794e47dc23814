import { ErrorCode, GatewayError } from '@app/contracts';
import { Scope } from './scopes';
import {
  forgeToken,
  rejectedTokens,
  TEST_AUDIENCE,
  TEST_ISSUER,
  TEST_SECRET,
  testClaims,
  testKeys,
} from './testing/token-fixtures';
import { TokenVerifier, verifiedEntryBytes } from './token-verifier';

describe('TokenVerifier', () => {
  let verifier: TokenVerifier;
  beforeAll(async () => {
    verifier = await TokenVerifier.create({
      hs256Secret: TEST_SECRET,
      jwks: testKeys().jwks,
      issuer: TEST_ISSUER,
      audience: TEST_AUDIENCE,
      clockToleranceS: 0,
    });
  });

  it.each(['HS256', 'RS256', 'ES256'] as const)('accepts a valid %s token', async (alg) => {
    const key =
      alg === 'HS256'
        ? TEST_SECRET
        : alg === 'RS256'
          ? testKeys().rsaPrivate
          : testKeys().ecPrivate;
    const claims = testClaims({ sub: 'alice', scopes: ['orders:read', 'unknown:scope'] });
    const p = await verifier.verify(forgeToken(claims, alg, key));
    expect(p.subject).toBe('alice');
    expect([...p.scopes]).toEqual([Scope.OrdersRead]);
    expect(p.expiresAtMs).toBe((claims.exp as number) * 1000);
  });

  it('reuses a verification, but never past the token expiry', async () => {
    jest.useFakeTimers({
      now: Date.now(),
      doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'],
    });
    try {
      const token = forgeToken(testClaims({ sub: 'cached', ttlS: 30 }));
      const first = await verifier.verify(token);
      expect(await verifier.verify(token)).toBe(first);
      jest.setSystemTime(Date.now() + 31_000);
      await expect(verifier.verify(token)).rejects.toMatchObject({ message: 'token expired' });
    } finally {
      jest.useRealTimers();
    }
  });

  it('remembers verified tokens within its byte bound, forgetting the least recently used', async () => {
    // Built once: a token carries the second it was made in (iat, exp), so one rebuilt for
    // the recall after a second boundary would be another token.
    const tokens = Array.from({ length: 101 }, (_, i) =>
      forgeToken({ ...testClaims({ sub: `s${i}` }), pad: 'x'.repeat(4_000) }),
    );
    const one = verifiedEntryBytes(tokens[0], await verifier.verify(tokens[0]));
    const bounded = await TokenVerifier.create({
      hs256Secret: TEST_SECRET,
      issuer: TEST_ISSUER,
      audience: TEST_AUDIENCE,
      verifiedMaxBytes: one * 4,
    });
    for (let i = 1; i <= 100; i++) await bounded.verify(tokens[i]);
    const use = bounded.memoryUse;
    expect(use).toMatchObject({ structure: 'verified_tokens', entries: 4, evictions: 96 });
    expect(use.bytes).toBeLessThanOrEqual(one * 4);
    expect(use.bytes).toBeGreaterThan(4 * 4_000);
    expect(bounded.recall(tokens[100])?.subject).toBe('s100');
    expect(bounded.recall(tokens[1])).toBeUndefined();
  });

  it.each(Object.entries(rejectedTokens()).filter(([, t]) => t !== undefined))(
    'refuses %s with Unauthenticated',
    async (_name, token) => {
      const err = await verifier.verify(token as string).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).code).toBe(ErrorCode.Unauthenticated);
    },
  );

  it('pins algorithms per key: an RS256 token claiming the EC key, and HS256 with only a JWKS, fail', async () => {
    const rsClaimingEc = forgeToken(testClaims(), 'RS256', testKeys().rsaPrivate, { kid: 'ec-1' });
    await expect(verifier.verify(rsClaimingEc)).rejects.toMatchObject({
      code: ErrorCode.Unauthenticated,
    });
    const jwksOnly = await TokenVerifier.create({
      jwks: testKeys().jwks,
      issuer: TEST_ISSUER,
      audience: TEST_AUDIENCE,
    });
    await expect(jwksOnly.verify(forgeToken(testClaims()))).rejects.toMatchObject({
      code: ErrorCode.Unauthenticated,
      message: 'token algorithm not allowed',
    });
  });

  it('honours the clock tolerance on exp and adds it to expiresAtMs', async () => {
    const lenient = await TokenVerifier.create({
      hs256Secret: TEST_SECRET,
      issuer: TEST_ISSUER,
      audience: TEST_AUDIENCE,
      clockToleranceS: 30,
    });
    const claims = { ...testClaims(), exp: Math.floor(Date.now() / 1000) - 10 };
    const p = await lenient.verify(forgeToken(claims));
    expect(p.expiresAtMs).toBe((claims.exp + 30) * 1000);
  });

  it('refuses JWKS keys without a pinned alg, private keys and short secrets at start-up', async () => {
    const { jwks } = testKeys();
    const unpinned = { keys: jwks.keys.map(({ alg: _alg, ...k }) => k) };
    await expect(TokenVerifier.create({ jwks: unpinned })).rejects.toThrow(/alg/);
    await expect(TokenVerifier.create({ hs256Secret: 'short' })).rejects.toThrow(/32 bytes/);
    await expect(
      TokenVerifier.create({ jwks: { keys: [{ ...jwks.keys[0], d: 'x' }] } }),
    ).rejects.toThrow(/private/);
  });
});
