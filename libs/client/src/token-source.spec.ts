import { jwtExpiryMs, TokenSource } from './token-source';

const jwt = (exp: number) =>
  `h.${Buffer.from(JSON.stringify({ sub: 's', exp })).toString('base64url')}.sig`;

describe('TokenSource', () => {
  afterEach(() => jest.useRealTimers());

  it('reads a JWT exp without verifying it; anything else has none', () => {
    expect(jwtExpiryMs(jwt(1_900_000_000))).toBe(1_900_000_000_000);
    expect(jwtExpiryMs('opaque-token')).toBeUndefined();
    expect(jwtExpiryMs('a.%%%.c')).toBeUndefined();
  });

  it('asks getToken() before the expiry, once for concurrent askers', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    let calls = 0;
    const source = new TokenSource({
      token: jwt(1_000 + 60),
      getToken: () => `t${++calls}`,
      refreshBeforeExpiryMs: 30_000,
    });
    await source.start();
    expect(calls).toBe(0);
    await jest.advanceTimersByTimeAsync(29_999);
    expect(calls).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toBe(1);
    expect(source.current).toBe('t1');
    const [a, b] = await Promise.all([source.refresh('expired'), source.refresh('expired')]);
    expect([a, b, calls, source.version]).toEqual([true, true, 2, 2]);
    source.stop();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('says whether the token changed, and never loops on a token about to expire', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    let calls = 0;
    const source = new TokenSource({ token: 'same', getToken: () => (calls++, 'same') });
    expect(await source.refresh('refused')).toBe(false);
    const soon = new TokenSource({ token: jwt(1_000), getToken: () => (calls++, jwt(1_000)) });
    await soon.start();
    await jest.advanceTimersByTimeAsync(999);
    expect(calls).toBe(1);
    soon.stop();
  });
});
