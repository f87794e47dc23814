import { ErrorCode } from '@app/contracts';
import {
  flat,
  expectEstimateCovers,
  HEAP_MEASURE_TIMEOUT_MS,
  retainedHeap,
} from '../../contracts/src/testing/retained-heap';
import { InMemoryRateWindows, rateWindowBytes } from './rate-windows';

// Weighing the heap in a process shared with other spec files: memory an earlier one
// releases between the two readings can make one impossible (a negative size was seen in
// CI); each test here builds its own structures, so a second run of it decides.
jest.retryTimes(2, { logErrorsBeforeRetry: true });

describe('InMemoryRateWindows', () => {
  it('counts a fixed window and blocks the hit over the limit for the block duration', async () => {
    let now = 10_000;
    const windows = new InMemoryRateWindows({ now: () => now });
    const hit = () => windows.increment('alice', 1_000, 2, 1_000, 'publish');
    expect(await hit()).toMatchObject({ totalHits: 1, isBlocked: false, timeToExpire: 1 });
    expect(await hit()).toMatchObject({ totalHits: 2, isBlocked: false });
    expect(await hit()).toMatchObject({ totalHits: 3, isBlocked: true, timeToBlockExpire: 1 });
    expect((await windows.increment('bob', 1_000, 2, 1_000, 'publish')).isBlocked).toBe(false);
    now += 1_000;
    expect(await hit()).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('refuses a new key past its byte bound, with retry advice, and keeps every live window', async () => {
    let now = 10_000;
    const subject = (i: number) => String(i).padStart(128, 's');
    const one = rateWindowBytes(`publish:${subject(0)}`);
    const windows = new InMemoryRateWindows({ maxBytes: one * 3, now: () => now });
    const hit = (i: number) => windows.increment(subject(i), 1_000, 1, 1_000, 'publish');
    for (let i = 1; i <= 3; i++) await hit(i);
    now += 400;
    for (let i = 4; i <= 50; i++) {
      await expect(hit(i)).rejects.toMatchObject({
        code: ErrorCode.ResourceExhausted,
        retryAfterMs: 1_000, // the oldest window ends in 600 ms; advice is at least 1 s
      });
    }
    // A principal already counted is still limited: its window was not forgotten.
    expect((await hit(1)).isBlocked).toBe(true);
    expect(windows.memoryUse).toMatchObject({
      structure: 'rate_windows',
      entries: 3,
      refusals: 47,
      evictions: 0,
    });
    expect(windows.memoryUse.bytes).toBeLessThanOrEqual(one * 3);
    now += 2_000; // every window and block over: room again
    expect((await hit(4)).isBlocked).toBe(false);
    expect(windows.memoryUse.entries).toBe(1);
  });

  it(
    'its estimate is at least the heap a window really holds, and not far above',
    async () => {
      const windows = new InMemoryRateWindows({ maxBytes: 1024 ** 3 });
      const subjects = Array.from({ length: 5_000 }, (_, i) => flat(String(i).padStart(128, 's')));
      const { bytes } = await retainedHeap(async () => {
        for (const s of subjects) await windows.increment(s, 60_000, 10, 60_000, 'publish');
        return windows;
      });
      const estimated = windows.memoryUse.bytes;
      expect(windows.memoryUse.entries).toBe(5_000);
      expectEstimateCovers(bytes, estimated);
    },
    HEAP_MEASURE_TIMEOUT_MS,
  );
});
