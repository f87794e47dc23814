import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// The collector is exposed for this process only, so a spec can weigh what it keeps.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * A spec that weighs the heap waits for it to settle, twice, under a loaded machine: in a
 * Jest process that has run many spec files the heap is large and two full collections
 * take about half a second, so fifty attempts per reading need most of a minute.
 */
export const HEAP_MEASURE_TIMEOUT_MS = 90_000;

/** Largest change between two readings that counts as a heap at rest. */
const SETTLED_DELTA_BYTES = 32 * 1024;
const SETTLE_ATTEMPTS = 50;
const SETTLE_PAUSE_MS = 20;

/**
 * heapUsed after full collections, once two readings a pause apart agree: what an
 * earlier spec in the same process still releases (a closing server) must not count.
 */
async function settledHeapUsed(): Promise<number> {
  let last = Number.NaN;
  for (let i = 0; i < SETTLE_ATTEMPTS; i++) {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_PAUSE_MS));
    gc();
    gc();
    const used = process.memoryUsage().heapUsed;
    if (Math.abs(used - last) < SETTLED_DELTA_BYTES) return used;
    last = used;
  }
  return last;
}

/**
 * Heap bytes `make` leaves behind: heapUsed after a full collection, before and after.
 * What it resolves to stays reachable until the measure is taken (it is returned).
 */
export async function retainedHeap<T>(
  make: () => T | Promise<T>,
): Promise<{ readonly value: T; readonly bytes: number }> {
  const before = await settledHeapUsed();
  const value = await make();
  const bytes = (await settledHeapUsed()) - before;
  return { value, bytes };
}

/**
 * A structure's byte estimate must cover what its entries hold on the heap (else its
 * bound is not one) without overstating it by half (else its default wastes the bound).
 */
export function expectEstimateCovers(heapBytes: number, estimatedBytes: number): void {
  const ratio = estimatedBytes / heapBytes;
  if (!(ratio >= 1 && ratio < 1.5)) {
    throw new Error(
      `estimate ${estimatedBytes} B for ${heapBytes} B held on the heap: ratio ${ratio.toFixed(2)}, want 1 to 1.5`,
    );
  }
}

/** A flat copy of `s`, as a string parsed from a request is (not a concatenation). */
export function flat(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}
