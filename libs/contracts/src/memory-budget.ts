/**
 * Byte budgets for the in-memory structures a client can grow (idempotency keys, stream
 * tickets, rate windows, verified tokens, socket subscriptions). Each is bounded by an
 * estimate of the bytes its entries hold, not by a count: a count bounds memory only as
 * well as the largest entry a client can make is known.
 *
 * The estimate follows V8's layout on a 64-bit build without pointer compression (Node's
 * official builds): a string is a 16-byte header plus one byte per character, two when
 * any character is outside Latin-1; an object is a 24-byte header plus 8 bytes per
 * property; a Set a 136-byte table plus 8 bytes per item; a number that is not a small
 * integer is an 8-byte heap number plus its header. Each structure adds the fixed cost of its own bookkeeping per entry (Map
 * slots, timestamps), measured in the structure's spec against the heap itself.
 */

/** What /metrics reports for one bounded structure (`order_memory_*{structure}`). */
export interface MemoryUse {
  /** The metrics label: `idempotency_keys`, `stream_tickets`, ... */
  readonly structure: string;
  /** The bound, in estimated bytes. */
  readonly maxBytes: number;
  /** Estimated bytes held now. */
  readonly bytes: number;
  readonly entries: number;
  /** Entries dropped to make room (caches: a client may have to redo what they saved). */
  readonly evictions: number;
  /** Requests refused because the structure was full (stores that must keep a promise). */
  readonly refusals: number;
}

/** A structure that reports its memory use. */
export interface MemoryBounded {
  readonly memoryUse: MemoryUse;
}

/** V8 string header (map, hash, length), rounded to the heap's 8-byte alignment. */
export const STRING_HEADER_BYTES = 16;
/** V8 object header: map, properties and elements pointers. */
export const OBJECT_HEADER_BYTES = 24;
/** One property slot (a tagged pointer). */
export const POINTER_BYTES = 8;
/** A heap number: header plus the float64. */
const HEAP_NUMBER_BYTES = 16;
/** An empty Set or Map: the object and its smallest hash table. */
const COLLECTION_HEADER_BYTES = 136;

/** Estimated bytes of a string: one byte per character, two if any is past U+00FF. */
export function stringBytes(s: string): number {
  // eslint-disable-next-line no-control-regex
  const perChar = /[^\u0000-\u00ff]/.test(s) ? 2 : 1;
  return align8(STRING_HEADER_BYTES + s.length * perChar);
}

/**
 * Estimated bytes of a JSON-like value (strings, numbers, booleans, plain objects,
 * arrays, Sets of strings): what a cache entry's value costs. Small integers live in the
 * pointer itself and cost nothing beyond the slot.
 */
export function valueBytes(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return stringBytes(value);
    case 'number':
      return Number.isInteger(value) && Math.abs(value) < 2 ** 31 ? 0 : HEAP_NUMBER_BYTES;
    case 'object': {
      if (value === null) return 0;
      const collection = value instanceof Set;
      const items: Iterable<unknown> =
        collection || Array.isArray(value) ? value : Object.values(value);
      let bytes = collection ? COLLECTION_HEADER_BYTES : OBJECT_HEADER_BYTES;
      for (const item of items) bytes += POINTER_BYTES + valueBytes(item);
      return bytes;
    }
    default:
      return 0;
  }
}

function align8(n: number): number {
  return Math.ceil(n / 8) * 8;
}

/**
 * The byte count and counters of a structure that refuses at its bound (evicting would
 * break a promise it made, e.g. a ticket it issued): `tryReserve` before adding an
 * entry, `release` when it goes.
 */
export class ByteBudget implements MemoryBounded {
  private bytes = 0;
  private entries = 0;
  private refusals = 0;

  constructor(
    readonly structure: string,
    readonly maxBytes: number,
  ) {
    assertMaxBytes(structure, maxBytes);
  }

  /** Counts `bytes` for a new entry, or counts a refusal and answers false. */
  tryReserve(bytes: number): boolean {
    if (this.bytes + bytes > this.maxBytes) {
      this.refusals++;
      return false;
    }
    this.bytes += bytes;
    this.entries++;
    return true;
  }

  release(bytes: number): void {
    this.bytes -= bytes;
    this.entries--;
  }

  reset(): void {
    this.bytes = 0;
    this.entries = 0;
  }

  get memoryUse(): MemoryUse {
    const { structure, maxBytes, bytes, entries, refusals } = this;
    return { structure, maxBytes, bytes, entries, evictions: 0, refusals };
  }
}

/** @throws TypeError unless `maxBytes` is a positive integer (programmer error). */
export function assertMaxBytes(structure: string, maxBytes: number): void {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw new TypeError(`${structure}: maxBytes must be an integer >= 1`);
  }
}
