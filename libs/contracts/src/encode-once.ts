import { eventOf, type OrderEvent, type StreamItem } from './order-events';

/** Encodings kept per wire format, by count. */
export const ENCODE_ONCE_MAX_ENTRIES = 1024;
/** ... and by size (the sum of `sizeOf` over the kept encodings). */
export const ENCODE_ONCE_MAX_BYTES = 8 * 1024 * 1024;

export interface EncodeOnceOptions<T> {
  /** Builds one wire encoding of an event's item (an SSE frame, protobuf bytes, ...). */
  readonly encode: (item: StreamItem) => T;
  /** Bytes an encoding holds, for the size bound. */
  readonly sizeOf: (encoded: T) => number;
  /** @default ENCODE_ONCE_MAX_ENTRIES */
  readonly maxEntries?: number;
  /** @default ENCODE_ONCE_MAX_BYTES */
  readonly maxBytes?: number;
}

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
 * Resets and skipped ranges are per subscriber and not cached.
 */
export class EncodeOnce<T> {
  private readonly kept = new Map<OrderEvent, T>();
  private bytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  /** Encodings made so far (cache misses, uncached items included). */
  encodings = 0;

  constructor(private readonly options: EncodeOnceOptions<T>) {
    this.maxEntries = options.maxEntries ?? ENCODE_ONCE_MAX_ENTRIES;
    this.maxBytes = options.maxBytes ?? ENCODE_ONCE_MAX_BYTES;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1) {
      throw new TypeError('maxEntries must be an integer >= 1');
    }
    if (!(this.maxBytes >= 0)) throw new TypeError('maxBytes must be >= 0');
  }

  /** The encoding of `item`: the kept one for an event already encoded, else a new one. */
  get(item: StreamItem): T {
    const event = eventOf(item);
    if (event === undefined) {
      this.encodings++;
      return this.options.encode(item);
    }
    const kept = this.kept.get(event);
    if (kept !== undefined) return kept;
    const encoded = this.options.encode(item);
    this.encodings++;
    const size = this.options.sizeOf(encoded);
    // An encoding larger than the whole budget is used once and not kept.
    if (size > this.maxBytes) return encoded;
    this.kept.set(event, encoded);
    this.bytes += size;
    while (this.kept.size > this.maxEntries || this.bytes > this.maxBytes) this.evictOldest();
    return encoded;
  }

  /** Encodings kept now. */
  get size(): number {
    return this.kept.size;
  }

  private evictOldest(): void {
    // Map iterates in insertion order: the first key is the oldest encoding.
    const first = this.kept.entries().next();
    if (first.done === true) return;
    const [event, encoded] = first.value;
    this.kept.delete(event);
    this.bytes -= this.options.sizeOf(encoded);
  }
}
