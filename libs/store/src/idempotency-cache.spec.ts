import { IDEMPOTENCY_KEY_MAX_LENGTH, scopedIdempotencyKey } from '@app/contracts';
import { OrderStatus, type OrderStatusChanged } from '@app/order-domain';
import {
  expectEstimateCovers,
  HEAP_MEASURE_TIMEOUT_MS,
  retainedHeap,
} from '../../contracts/src/testing/retained-heap';
import { IdempotencyCache, idempotencyEntryBytes } from './idempotency-cache';

// Weighing the heap in a process shared with other spec files: memory an earlier one
// releases between the two readings can make one impossible (a negative size was seen in
// CI); each test here builds its own structures, so a second run of it decides.
jest.retryTimes(2, { logErrorsBeforeRetry: true });

const event = (orderId: string, seq: number): OrderStatusChanged => ({
  orderId,
  seq,
  status: OrderStatus.Paid,
  previousStatus: OrderStatus.Created,
  publishedAtUs: 1_700_000_000_000_000 + seq,
});

/** A key as long as a client may send, distinct per `i`. */
const longKey = (i: number): string => String(i).padStart(IDEMPOTENCY_KEY_MAX_LENGTH, 'k');

describe('IdempotencyCache', () => {
  it('keeps each key for the window, per order', () => {
    let nowMs = 1_000;
    const cache = new IdempotencyCache({ windowMs: 100, now: () => nowMs });
    cache.remember('k', event('a', 1));
    expect(cache.get('a', 'k')).toEqual(event('a', 1));
    expect(cache.get('b', 'k')).toBeUndefined();
    nowMs += 100;
    expect(cache.get('a', 'k')).toBeUndefined();
  });

  it('drops expired keys as new ones arrive, so an idle key costs nothing for long', () => {
    let nowMs = 1_000;
    const cache = new IdempotencyCache({ windowMs: 100, now: () => nowMs });
    for (let i = 0; i < 50; i++) cache.remember(`k${i}`, event('a', i));
    nowMs += 100;
    cache.remember('fresh', event('a', 99));
    expect(cache.size).toBe(1);
    expect(cache.memoryUse.evictions).toBe(0);
  });

  it('stays within maxBytes, forgetting the least recently used first, and counts it', () => {
    const one = idempotencyEntryBytes(`a\n${longKey(0)}`, event('a', 0));
    const cache = new IdempotencyCache({ maxBytes: one * 3 });
    for (let i = 1; i <= 3; i++) cache.remember(longKey(i), event('a', i));
    expect(cache.get('a', longKey(1))?.seq).toBe(1); // now the most recently used
    for (let i = 4; i <= 1_000; i++) cache.remember(longKey(i), event('a', i));
    const use = cache.memoryUse;
    expect(use.bytes).toBeLessThanOrEqual(one * 3);
    expect(use.entries).toBe(3);
    expect(use.evictions).toBe(997);
    expect(use).toMatchObject({ structure: 'idempotency_keys', maxBytes: one * 3, refusals: 0 });
    expect(cache.get('a', longKey(1000))?.seq).toBe(1000);
    expect(cache.get('a', longKey(2))).toBeUndefined();
  });

  it('weighs an entry by what it holds: a bigger event costs more of the bound', () => {
    const small = idempotencyEntryBytes('a\nk', event('a', 1));
    const reason = 'x'.repeat(4096);
    const big = idempotencyEntryBytes('a\nk', { ...event('a', 1), reason });
    expect(big - small).toBeGreaterThanOrEqual(4096);
  });

  it(
    'its estimate is at least the heap an entry really holds, and not far above',
    async () => {
      const cache = new IdempotencyCache({ maxBytes: 1024 ** 3 });
      const subject = 's'.repeat(64);
      const { bytes } = await retainedHeap(() => {
        for (let i = 0; i < 10_000; i++) {
          // Built as the publish path builds them: the scoped key, a fresh event per publish.
          cache.remember(scopedIdempotencyKey(subject, longKey(i)), event(`order-${i % 100}`, i));
        }
        return cache;
      });
      const estimated = cache.memoryUse.bytes;
      expectEstimateCovers(bytes, estimated);
    },
    HEAP_MEASURE_TIMEOUT_MS,
  );

  it('rejects options outside their range (programmer error)', () => {
    expect(() => new IdempotencyCache({ windowMs: 0 })).toThrow(TypeError);
    expect(() => new IdempotencyCache({ maxBytes: 0.5 })).toThrow(TypeError);
  });
});
