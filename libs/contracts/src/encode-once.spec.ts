import { EncodeOnce } from './encode-once';
import type { DomainEvent } from './stream-domain';
import { SkipReason, type StreamSkipped } from './stream-envelope';

// A domain-free fixture: two event kinds (told apart by a location) and a skipped range.
interface TestEvent extends DomainEvent {
  readonly status: string;
  readonly padding?: string;
  readonly location?: { readonly lat: number; readonly lon: number };
  readonly etaMs?: number;
}

type StreamItem =
  | { readonly kind: 'event'; readonly event: TestEvent }
  | { readonly kind: 'tracking'; readonly tracking: TestEvent }
  | { readonly kind: 'skipped'; readonly skipped: StreamSkipped };

const itemOf = (e: TestEvent): StreamItem =>
  e.location !== undefined ? { kind: 'tracking', tracking: e } : { kind: 'event', event: e };

const event = (seq: number, padding?: string): TestEvent => ({
  orderId: 'o-1',
  seq,
  status: 'paid',
  publishedAtUs: 1_000 + seq,
  ...(padding !== undefined ? { padding } : {}),
});

const tracking = (seq: number): TestEvent => ({
  orderId: 'o-1',
  seq,
  status: 'shipped',
  publishedAtUs: 2_000 + seq,
  location: { lat: 1, lon: 2 },
  etaMs: 3,
});

function counting(maxEntries?: number, maxBytes?: number) {
  const calls: StreamItem[] = [];
  const cache = new EncodeOnce<string, StreamItem>({
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

  /** Asks for each event twice in a row, as a fan-out to two subscribers does: kept. */
  const askTwice = (cache: EncodeOnce<string, StreamItem>, e: TestEvent) => {
    cache.get(itemOf(e));
    return cache.get(itemOf(e));
  };

  it('keeps at most maxEntries, oldest out first, and re-encodes an evicted event', () => {
    const { cache, calls } = counting(2);
    const [a, b, c] = [event(1), event(2), event(3)];
    for (const e of [a, b, c]) askTwice(cache, e);
    expect(cache.size).toBe(2);
    expect(calls).toHaveLength(3);
    cache.get(itemOf(c));
    cache.get(itemOf(b));
    expect(calls).toHaveLength(3);
    // a fell out of the kept ones; it was asked for before, so it is kept again at once.
    cache.get(itemOf(a));
    expect(calls).toHaveLength(4);
    cache.get(itemOf(a));
    expect(calls).toHaveLength(4);
  });

  it('keeps at most maxBytes, and does not keep an encoding larger than the budget', () => {
    const { cache } = counting(100, 300);
    const big = event(1, 'x'.repeat(400));
    askTwice(cache, big);
    expect(cache.size).toBe(0);
    for (let seq = 2; seq < 10; seq++) askTwice(cache, event(seq));
    // Each encoding is ~100 characters: at most 3 fit in 300.
    expect(cache.size).toBeLessThanOrEqual(3);
    expect(cache.size).toBeGreaterThan(0);
  });

  it('keeps the newest maxEntries across many turns of its ring, with mixed sizes', () => {
    const { cache, calls } = counting(5, 1_000);
    const events = Array.from({ length: 53 }, (_, i) => event(i + 1, 'x'.repeat((i * 37) % 300)));
    for (const e of events) askTwice(cache, e);
    expect(calls).toHaveLength(53);
    expect(cache.size).toBeGreaterThan(0);
    expect(cache.size).toBeLessThanOrEqual(5);
    // The newest is kept (asked again: no new encoding) ...
    cache.get(itemOf(events[52]));
    expect(calls).toHaveLength(53);
    // ... the ones that fell out are encoded again, and that keeps the bounds.
    for (const e of events.slice(0, 20)) cache.get(itemOf(e));
    expect(calls).toHaveLength(73);
    expect(cache.size).toBeLessThanOrEqual(5);
  });

  it('keeps nothing for long of an event asked for once (one subscriber per order)', () => {
    const { cache, calls } = counting(4);
    for (let seq = 1; seq <= 100; seq++) cache.get(itemOf(event(seq)));
    expect(calls).toHaveLength(100);
    expect(cache.size).toBe(0);
  });

  it('keeps an event asked for again after its first encoding left the recent slots', () => {
    const { cache, calls } = counting();
    const first = event(1);
    cache.get(itemOf(first));
    // A subscriber that drains several events before the next one asks for the first.
    for (let seq = 2; seq <= 20; seq++) cache.get(itemOf(event(seq)));
    expect(calls).toHaveLength(20);
    cache.get(itemOf(first));
    expect(calls).toHaveLength(21);
    for (let i = 0; i < 50; i++) cache.get(itemOf(first));
    expect(calls).toHaveLength(21);
    expect(cache.size).toBe(1);
  });

  it('rejects a bound that cannot work', () => {
    expect(() => counting(0)).toThrow(TypeError);
    expect(() => counting(1, -1)).toThrow(TypeError);
  });
});
