import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// The collector is exposed for this process only, so a spec can weigh what it keeps.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function settledHeapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/**
 * Heap bytes `make` leaves behind: heapUsed after a full collection, before and after.
 * What it resolves to stays reachable until the measure is taken (it is returned).
 */
export async function retainedHeap<T>(
  make: () => T | Promise<T>,
): Promise<{ readonly value: T; readonly bytes: number }> {
  const before = settledHeapUsed();
  const value = await make();
  const bytes = settledHeapUsed() - before;
  return { value, bytes };
}

/** A flat copy of `s`, as a string parsed from a request is (not a concatenation). */
export function flat(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}
