import { OrderStatus, type OrderStatusChanged } from '@app/contracts';
import { IdempotencyCache } from './idempotency-cache';

const event = (orderId: string, seq: number): OrderStatusChanged => ({
  orderId,
  seq,
  status: OrderStatus.Paid,
  publishedAtUs: seq,
});

describe('IdempotencyCache', () => {
  afterEach(() => jest.useRealTimers());

  it('keeps each key for the window, per order', () => {
    jest.useFakeTimers();
    const cache = new IdempotencyCache({ windowMs: 100 });
    cache.remember('k', event('a', 1));
    expect(cache.get('a', 'k')).toEqual(event('a', 1));
    expect(cache.get('b', 'k')).toBeUndefined();
    jest.advanceTimersByTime(100);
    expect(cache.get('a', 'k')).toBeUndefined();
  });

  it('drops expired keys as new ones arrive, so an idle key costs nothing for long', () => {
    jest.useFakeTimers();
    const cache = new IdempotencyCache({ windowMs: 100 });
    for (let i = 0; i < 50; i++) cache.remember(`k${i}`, event('a', i));
    jest.advanceTimersByTime(100);
    cache.remember('fresh', event('a', 99));
    expect(cache.size).toBe(1);
  });

  it('stays within maxKeys, forgetting the oldest first', () => {
    const cache = new IdempotencyCache({ maxKeys: 3 });
    for (let i = 1; i <= 5; i++) cache.remember(`k${i}`, event('a', i));
    expect(cache.size).toBe(3);
    expect(cache.get('a', 'k2')).toBeUndefined();
    expect(cache.get('a', 'k3')?.seq).toBe(3);
    expect(cache.get('a', 'k5')?.seq).toBe(5);
  });

  it('rejects options outside their range (programmer error)', () => {
    expect(() => new IdempotencyCache({ windowMs: 0 })).toThrow(TypeError);
    expect(() => new IdempotencyCache({ maxKeys: 0.5 })).toThrow(TypeError);
  });
});
