import { Backoff } from './backoff';

describe('Backoff', () => {
  it('draws a full-jitter delay below a doubling cap, up to the maximum', () => {
    const top = new Backoff({ baseMs: 100, maxMs: 1_000 }, () => 0.999_999);
    expect([1, 2, 3, 4, 5, 6].map(() => top.next())).toEqual([99, 199, 399, 799, 999, 999]);
    const bottom = new Backoff({ baseMs: 100, maxMs: 1_000 }, () => 0);
    expect([bottom.next(), bottom.next()]).toEqual([0, 0]);
  });

  it("takes the server's advice as the delay, still counting the attempt", () => {
    const b = new Backoff({ baseMs: 100, maxMs: 1_000 }, () => 0.5);
    expect(b.next(1_234)).toBe(1_234);
    expect(b.attempts).toBe(1);
    expect(b.next()).toBe(100);
    b.reset();
    expect(b.next()).toBe(50);
  });

  it('rejects options it cannot honour', () => {
    expect(() => new Backoff({ baseMs: 10, maxMs: 5 })).toThrow(TypeError);
  });
});
