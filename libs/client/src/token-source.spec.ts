import { Backoff } from './backoff';
import { jwtExpiryMs, TokenSource } from './token-source';

const jwt = (exp: number, iat?: number) =>
  `h.${Buffer.from(JSON.stringify({ sub: 's', exp, ...(iat === undefined ? {} : { iat }) })).toString('base64url')}.sig`;

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
      token: jwt(1_000 + 600),
      getToken: () => `t${++calls}`,
      refreshBeforeExpiryMs: 30_000,
    });
    source.start();
    expect(calls).toBe(0);
    await jest.advanceTimersByTimeAsync(569_999);
    expect(calls).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toBe(1);
    expect(source.current).toBe('t1');
    const [a, b] = await Promise.all([source.refresh('expired'), source.refresh('expired')]);
    expect([a, b, calls, source.version]).toEqual(['changed', 'changed', 2, 2]);
    source.stop();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('renews a token shorter than refreshBeforeExpiryMs once per lifetime, not every second', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    let calls = 0;
    // 6 s tokens against the default 30 s lead: renewed after two thirds of each (4 s).
    const mint = () => jwt(Math.floor(Date.now() / 1000) + 6, Math.floor(Date.now() / 1000));
    const source = new TokenSource({ token: mint(), getToken: () => (calls++, mint()) });
    source.start();
    await jest.advanceTimersByTimeAsync(3_999);
    expect(calls).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toBe(1);
    await jest.advanceTimersByTimeAsync(18_000);
    expect(calls).toBe(5);
    source.stop();
  });

  it('says whether the token changed, and never loops on a token about to expire', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    let calls = 0;
    const source = new TokenSource({ token: 'same', getToken: () => (calls++, 'same') });
    expect(await source.refresh('refused')).toBe('unchanged');
    const soon = new TokenSource({ token: jwt(1_000), getToken: () => (calls++, jwt(1_000)) });
    soon.start();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(calls).toBe(1);
    soon.stop();
  });

  it('treats a throwing getToken() as transient: failed, then retried after a backoff delay', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    let calls = 0;
    const source = new TokenSource({
      token: jwt(1_000 + 60, 1_000),
      getToken: () => {
        if (++calls < 3) throw new Error('token service down');
        return jwt(1_000 + 120, 1_000 + 40);
      },
      refreshBeforeExpiryMs: 20_000,
      backoff: new Backoff({ baseMs: 100, maxMs: 100 }, () => 0.5),
    });
    source.start();
    await jest.advanceTimersByTimeAsync(40_000);
    expect(calls).toBe(1);
    expect(source.lastError).toEqual(new Error('token service down'));
    await jest.advanceTimersByTimeAsync(50);
    expect(calls).toBe(2);
    await jest.advanceTimersByTimeAsync(50);
    expect([calls, source.version, source.lastError]).toEqual([3, 1, undefined]);
    expect(
      await new TokenSource({ getToken: () => Promise.reject(new Error('x')) }).refresh('expiring'),
    ).toBe('failed');
    source.stop();
  });
});
