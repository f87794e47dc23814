import { flat, HEAP_MEASURE_TIMEOUT_MS, retainedHeap } from './retained-heap';

const MIB = 1024 * 1024;
/** The value weighed: one flat string of a known size, which is almost all it holds. */
const VALUE_BYTES = MIB;
/** What an earlier spec in the same process still releases: far more than the value. */
const UNRELATED_BYTES = 8 * MIB;
/** The reading may be off by the headers and by what counts as a heap at rest. */
const TOLERANCE_BYTES = 64 * 1024;

const value = () => ({ s: flat('v'.repeat(VALUE_BYTES)) });
const nothing = () => undefined;

function expectValueBytes(bytes: number, context: object): void {
  const within = Math.abs(bytes - VALUE_BYTES) <= TOLERANCE_BYTES;
  expect({ ...context, bytes, within }).toEqual({ ...context, bytes, within: true });
}

describe('retainedHeap', () => {
  // One measure per reading a measure takes, about a dozen: far from a budget each, but
  // each collection is slow late in an in-band run on a loaded machine.
  it(
    'weighs a value right while unrelated memory is released after any one of its readings',
    async () => {
      const memoryUsage = process.memoryUsage.bind(process);
      for (let releaseAfter = 1; ; releaseAfter++) {
        let unrelated: { s: string } | undefined = { s: flat('u'.repeat(UNRELATED_BYTES)) };
        let readings = 0;
        const spy = jest.spyOn(process, 'memoryUsage').mockImplementation(() => {
          const usage = memoryUsage();
          if (++readings === releaseAfter) unrelated = undefined;
          return usage;
        });
        try {
          const { bytes } = await retainedHeap(value, nothing);
          expectValueBytes(bytes, { releaseAfter });
        } finally {
          spy.mockRestore();
        }
        // The measure read fewer times than this: a release after each reading has been tried.
        if (unrelated !== undefined) break;
      }
    },
    3 * HEAP_MEASURE_TIMEOUT_MS,
  );

  it(
    'weighs a value registered elsewhere once release unregisters it, and refuses one still kept',
    async () => {
      const registry = new Set<object>();
      const { bytes, inspected } = await retainedHeap(
        () => {
          const v = value();
          registry.add(v);
          return v;
        },
        () => registry.size,
        (v) => void registry.delete(v),
      );
      expectValueBytes(bytes, {});
      expect({ inspected, after: registry.size }).toEqual({ inspected: 1, after: 0 });

      await expect(
        retainedHeap(() => {
          const v = value();
          registry.add(v);
          return v;
        }, nothing),
      ).rejects.toThrow(/still reachable once released/);
    },
    2 * HEAP_MEASURE_TIMEOUT_MS,
  );
});
