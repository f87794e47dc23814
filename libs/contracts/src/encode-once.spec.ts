import { EncodeOnce } from './encode-once';
import {
  itemOf,
  SkipReason,
  type OrderStatusChanged,
  type StreamItem,
  type TrackingUpdated,
} from './order-events';
import { OrderStatus } from './order-status';

const event = (seq: number, padding?: string): OrderStatusChanged => ({
  orderId: 'o-1',
  seq,
  status: OrderStatus.Paid,
  publishedAtUs: 1_000 + seq,
  ...(padding !== undefined ? { padding } : {}),
});

const tracking = (seq: number): TrackingUpdated => ({
  orderId: 'o-1',
  seq,
  status: OrderStatus.Shipped,
  publishedAtUs: 2_000 + seq,
  location: { lat: 1, lon: 2 },
  etaMs: 3,
});

function counting(maxEntries?: number, maxBytes?: number) {
  const calls: StreamItem[] = [];
  const cache = new EncodeOnce<string>({
    encode: (item) => {
      calls.push(item);
      return JSON.stringify(item);
    },
    sizeOf: (s) => s.length,
    maxEntries,
    maxBytes,
  });
  return { cache, calls };
}

describe('EncodeOnce', () => {
  it('encodes an event once however many subscribers get their own item for it', () => {
    const { cache, calls } = counting();
    const e = event(1);
    // The bus builds one item per subscriber around the same event object.
    const encodings = Array.from({ length: 1000 }, () => cache.get(itemOf(e)));
    expect(calls).toHaveLength(1);
    expect(cache.encodings).toBe(1);
    expect(new Set(encodings).size).toBe(1);
    expect(encodings[0]).toBe(JSON.stringify(itemOf(e)));
  });

  it('keeps both kinds apart and never caches a per-subscriber reset or skipped range', () => {
    const { cache, calls } = counting();
    const t = tracking(2);
    cache.get(itemOf(t));
    cache.get(itemOf(t));
    const skipped: StreamItem = {
      kind: 'skipped',
      skipped: { fromSeq: 1, toSeq: 2, reason: SkipReason.Overflow },
    };
    cache.get(skipped);
    cache.get(skipped);
    expect(calls.map((c) => c.kind)).toEqual(['tracking', 'skipped', 'skipped']);
    expect(cache.size).toBe(1);
  });

  it('an equal but distinct event object is encoded on its own (identity, not value)', () => {
    const { cache, calls } = counting();
    cache.get(itemOf(event(1)));
    cache.get(itemOf(event(1)));
    expect(calls).toHaveLength(2);
  });

  it('keeps at most maxEntries, oldest out first, and re-encodes an evicted event', () => {
    const { cache, calls } = counting(2);
    const [a, b, c] = [event(1), event(2), event(3)];
    for (const e of [a, b, c]) cache.get(itemOf(e));
    expect(cache.size).toBe(2);
    cache.get(itemOf(c));
    cache.get(itemOf(b));
    expect(calls).toHaveLength(3);
    cache.get(itemOf(a));
    expect(calls).toHaveLength(4);
  });

  it('keeps at most maxBytes, and does not keep an encoding larger than the budget', () => {
    const { cache } = counting(100, 300);
    const big = event(1, 'x'.repeat(400));
    cache.get(itemOf(big));
    expect(cache.size).toBe(0);
    for (let seq = 2; seq < 10; seq++) cache.get(itemOf(event(seq)));
    // Each encoding is ~100 characters: at most 3 fit in 300.
    expect(cache.size).toBeLessThanOrEqual(3);
    expect(cache.size).toBeGreaterThan(0);
  });

  it('rejects a bound that cannot work', () => {
    expect(() => counting(0)).toThrow(TypeError);
    expect(() => counting(1, -1)).toThrow(TypeError);
  });
});
