import { ENVELOPE_ITEM_KINDS, type DomainEvent } from './stream-domain';

/** A stream item as the cache sees it: `{ kind, [kind]: body }`, an event unless the envelope's. */
export interface KindedItem {
  readonly kind: string;
}

/** The event `item` delivers, undefined for the envelope's items (reset, skipped). */
function eventOfItem(item: KindedItem): DomainEvent | undefined {
  if (ENVELOPE_ITEM_KINDS.includes(item.kind)) return undefined;
  return (item as unknown as Readonly<Record<string, DomainEvent>>)[item.kind];
}

/** Encodings kept per wire format, by count. */
export const ENCODE_ONCE_MAX_ENTRIES = 1024;
/** ... and by size (the sum of `sizeOf` over the kept encodings). */
export const ENCODE_ONCE_MAX_BYTES = 8 * 1024 * 1024;

export interface EncodeOnceOptions<T, Item extends KindedItem> {
  /** Builds one wire encoding of an event's item (an SSE frame, protobuf bytes, ...). */
  readonly encode: (item: Item) => T;
  /** Bytes an encoding holds, for the size bound. */
  readonly sizeOf: (encoded: T) => number;
  /** @default ENCODE_ONCE_MAX_ENTRIES */
  readonly maxEntries?: number;
  /** @default ENCODE_ONCE_MAX_BYTES */
  readonly maxBytes?: number;
}

/** Encodings of events asked for once so far, checked before encoding again. */
const RECENT_SLOTS = 8;

/**
 * One encoding per event per wire format, shared by every subscriber that receives the
 * event. The bus hands each subscriber its own item, but the event inside it is the one
 * object that was published, so the event is the key.
 *
 * Bounded, oldest out first, rather than a WeakMap on the event: the replay ring keeps up
 * to a ring's worth of events per order alive, and a WeakMap would keep an encoding
 * beside each of them (a second copy of every retained event, per format). Fan-out is
 * immediate for every subscriber that is not back-pressured, so the newest encodings are
 * the ones asked for again; a subscriber that writes an event after it left the cache
 * (a slow reader, a replay) gets the same bytes encoded again.
 *
 * Only events asked for more than once are kept for long. Most events have a single
 * subscriber (one client per order), and keeping each of their encodings for the next
 * 1,024 events kept every one alive across young-generation collections, which then
 * copied and promoted them.
 * A first encoding sits in a few recent slots, where a fan-out that asks for it again at
 * once (subscribers of one order, one after the other) finds it; an event asked for again
 * after it left them is encoded a second time and kept from then on.
 *
 * Resets and skipped ranges are per subscriber and not cached.
 */
export class EncodeOnce<T, Item extends KindedItem = KindedItem> {
  private readonly kept = new Map<DomainEvent, T>();
  /**
   * The kept events, oldest first, as a ring: evicting is O(1). Taking the first key of
   * `kept` instead walks over every entry deleted since the Map last compacted itself
   * (V8 leaves deleted entries in place until a rehash), hundreds per eviction.
   */
  private readonly ring: (DomainEvent | undefined)[];
  private readonly sizes: number[];
  private oldest = 0;
  private count = 0;
  private bytes = 0;
  /** Events asked for once, newest last, with their encodings while in these slots. */
  private readonly recentEvents: (DomainEvent | undefined)[] = new Array<DomainEvent | undefined>(
    RECENT_SLOTS,
  ).fill(undefined);
  private readonly recentEncodings: (T | undefined)[] = new Array<T | undefined>(RECENT_SLOTS).fill(
    undefined,
  );
  private recentNext = 0;
  /** The last `maxEntries` events asked for once (without their encodings). */
  private readonly seen = new Set<DomainEvent>();
  private readonly seenRing: (DomainEvent | undefined)[];
  private seenNext = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  /** Encodings made so far (cache misses, uncached items included). */
  encodings = 0;

  constructor(private readonly options: EncodeOnceOptions<T, Item>) {
    this.maxEntries = options.maxEntries ?? ENCODE_ONCE_MAX_ENTRIES;
    this.maxBytes = options.maxBytes ?? ENCODE_ONCE_MAX_BYTES;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1) {
      throw new TypeError('maxEntries must be an integer >= 1');
    }
    if (!(this.maxBytes >= 0)) throw new TypeError('maxBytes must be >= 0');
    this.ring = new Array<DomainEvent | undefined>(this.maxEntries).fill(undefined);
    this.sizes = new Array<number>(this.maxEntries).fill(0);
    this.seenRing = new Array<DomainEvent | undefined>(this.maxEntries).fill(undefined);
  }

  /** The encoding of `item`: the kept one for an event already encoded, else a new one. */
  get(item: Item): T {
    const event = eventOfItem(item);
    if (event === undefined) {
      this.encodings++;
      return this.options.encode(item);
    }
    const kept = this.kept.get(event);
    if (kept !== undefined) return kept;
    for (let i = 0; i < RECENT_SLOTS; i++) {
      if (this.recentEvents[i] !== event) continue;
      // Asked for a second time: kept from now on.
      const encoded = this.recentEncodings[i] as T;
      this.recentEvents[i] = undefined;
      this.recentEncodings[i] = undefined;
      this.keep(event, encoded);
      return encoded;
    }
    const encoded = this.options.encode(item);
    this.encodings++;
    if (this.seen.has(event)) this.keep(event, encoded);
    else this.rememberOnce(event, encoded);
    return encoded;
  }

  /** Encodings kept now (events asked for more than once). */
  get size(): number {
    return this.kept.size;
  }

  private rememberOnce(event: DomainEvent, encoded: T): void {
    const slot = this.recentNext;
    this.recentEvents[slot] = event;
    this.recentEncodings[slot] = encoded;
    this.recentNext = (slot + 1) % RECENT_SLOTS;
    const gone = this.seenRing[this.seenNext];
    if (gone !== undefined) this.seen.delete(gone);
    this.seenRing[this.seenNext] = event;
    this.seenNext = (this.seenNext + 1) % this.maxEntries;
    this.seen.add(event);
  }

  private keep(event: DomainEvent, encoded: T): void {
    const size = this.options.sizeOf(encoded);
    // An encoding larger than the whole budget is used once and not kept.
    if (size > this.maxBytes) return;
    if (this.count === this.maxEntries) this.evictOldest();
    while (this.count > 0 && this.bytes + size > this.maxBytes) this.evictOldest();
    const slot = (this.oldest + this.count) % this.maxEntries;
    this.ring[slot] = event;
    this.sizes[slot] = size;
    this.count++;
    this.bytes += size;
    this.kept.set(event, encoded);
  }

  private evictOldest(): void {
    const slot = this.oldest;
    const event = this.ring[slot];
    if (event !== undefined) this.kept.delete(event);
    this.bytes -= this.sizes[slot];
    this.ring[slot] = undefined;
    this.sizes[slot] = 0;
    this.oldest = (slot + 1) % this.maxEntries;
    this.count--;
  }
}

/**
 * A transport's encode-once cache for each domain it carries, made on first use: an
 * event's encoding depends on the domain (its wire names, its codec), and a domain lives
 * as long as the service (a process serves one; the specs use several).
 */
export function encodeOncePerDomain<T, Item extends KindedItem, D extends object>(
  options: (domain: D) => EncodeOnceOptions<T, Item>,
): (domain: D) => EncodeOnce<T, Item> {
  const caches = new WeakMap<D, EncodeOnce<T, Item>>();
  return (domain) => {
    let cache = caches.get(domain);
    if (cache === undefined) {
      cache = new EncodeOnce<T, Item>(options(domain));
      caches.set(domain, cache);
    }
    return cache;
  };
}
