import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// The collector is exposed for this process only, so a spec can weigh what it keeps.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * How long one measure may wait for a heap that holds still. Late in an in-band run two
 * full collections take about half a second, a trial needs at least four of those pairs,
 * and what an earlier spec file still releases can spoil a few trials before it is done.
 */
const HEAP_MEASURE_BUDGET_MS = 60_000;

/**
 * A spec that weighs the heap: the measure's budget, plus what may run past it before the
 * measure gives up (the trial under way: its make, inspect and release) and the spec's setup.
 */
export const HEAP_MEASURE_TIMEOUT_MS = HEAP_MEASURE_BUDGET_MS + 30_000;

/** Largest change between two readings that counts as a heap at rest. */
const SETTLED_DELTA_BYTES = 32 * 1024;
const SETTLE_PAUSE_MS = 20;

/**
 * heapUsed after full collections, once two readings a pause apart agree; undefined when
 * the deadline passes first (a reading of a heap still moving is no reading).
 */
async function settledHeapUsed(deadline: number): Promise<number | undefined> {
  let last = Number.NaN;
  while (performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_PAUSE_MS));
    gc();
    gc();
    const used = process.memoryUsage().heapUsed;
    if (Math.abs(used - last) < SETTLED_DELTA_BYTES) return used;
    last = used;
  }
  return undefined;
}

interface Trial<R> {
  readonly held: number | undefined;
  readonly released: number | undefined;
  readonly inspected: R;
  readonly collected: boolean;
}

/** One value built, weighed held, then released and weighed again. */
async function weighOnce<T extends object, R>(
  make: () => T | Promise<T>,
  inspect: (value: T) => R,
  release: ((value: T) => void | Promise<void>) | undefined,
  deadline: number,
): Promise<Trial<R>> {
  let value: T | undefined = await make();
  const ref = new WeakRef(value);
  const held = await settledHeapUsed(deadline);
  const inspected = inspect(value);
  await release?.(value);
  value = undefined;
  const released = await settledHeapUsed(deadline);
  return { held, released, inspected, collected: ref.deref() === undefined };
}

/**
 * Heap bytes the value `make` builds holds, weighed by releasing it: heapUsed with the
 * value held less heapUsed once it is released (what `make` left that outlives the value,
 * such as code compiled on first use, is not counted). A baseline read before `make` must
 * equal the heap after the release; when it does not, memory unrelated to the value (an
 * earlier spec file's closing server) was released or allocated during the trial, and
 * `make` builds a fresh value for another trial, until the budget is spent.
 *
 * `make` builds the value afresh on each call and nothing else may keep it: `inspect`
 * reads what the spec needs while it is held, and `release` undoes what `make` registered
 * elsewhere (a subscription on a shared bus), so that dropping the value frees it.
 */
export async function retainedHeap<T extends object, R>(
  make: () => T | Promise<T>,
  inspect: (value: T) => R,
  release?: (value: T) => void | Promise<void>,
): Promise<{ readonly bytes: number; readonly inspected: R }> {
  const deadline = performance.now() + HEAP_MEASURE_BUDGET_MS;
  const spoiled: string[] = [];
  let baseline = await settledHeapUsed(deadline);
  while (baseline !== undefined) {
    const { held, released, inspected, collected } = await weighOnce(
      make,
      inspect,
      release,
      deadline,
    );
    if (held === undefined || released === undefined) break;
    if (!collected) {
      throw new Error(
        'retainedHeap: the value is still reachable once released; make must build it and nothing else may keep it',
      );
    }
    const bytes = held - released;
    const drift = released - baseline;
    if (Math.abs(drift) < SETTLED_DELTA_BYTES) return { bytes, inspected };
    spoiled.push(`${bytes} B (heap moved ${drift} B)`);
    baseline = released;
  }
  throw new Error(
    `retainedHeap: no heap at rest within ${HEAP_MEASURE_BUDGET_MS} ms; trials read ${spoiled.join(', ') || 'nothing'}`,
  );
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
