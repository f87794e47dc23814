import { leastSquares } from '../stats/slope';
import {
  FLAT_TOLERANCE_MB_PER_HOUR,
  memoryTrend,
  soakVerdict,
  type SoakSample,
} from './memory-trend';

const reading = (tS: number, heapMB: number | undefined, rssMB = 100): SoakSample => ({
  tS,
  heapMB,
  rssMB,
  loopP99Ms: 10,
  loopMaxMs: 20,
  cpuPct: 5,
  connected: 1,
  delivered: 0,
});

describe('leastSquares', () => {
  it('recovers a line exactly, with no error', () => {
    const fit = leastSquares([0, 1, 2, 3].map((x) => ({ x, y: 5 + 2 * x })));
    expect(fit?.slope).toBeCloseTo(2, 12);
    expect(fit?.slopeStdError).toBeCloseTo(0, 12);
  });

  it('gives the textbook slope and standard error of a noisy set', () => {
    // x 1..5, y 2,4,5,4,5: slope 0.6, residual SS 2.4, Sxx 10 -> SE sqrt(0.8 / 10).
    const fit = leastSquares([2, 4, 5, 4, 5].map((y, i) => ({ x: i + 1, y })));
    expect(fit?.slope).toBeCloseTo(0.6, 12);
    expect(fit?.slopeStdError).toBeCloseTo(Math.sqrt(0.08), 12);
  });

  it('has no slope without two distinct x', () => {
    expect(leastSquares([{ x: 1, y: 1 }])).toBeUndefined();
    expect(
      leastSquares([
        { x: 1, y: 1 },
        { x: 1, y: 2 },
      ]),
    ).toBeUndefined();
  });
});

describe('memoryTrend', () => {
  it('fits only the readings of the last window, in MB per hour', () => {
    // 20 minutes of warm-up climbing 1 MB a minute, then 40 flat minutes.
    const samples = Array.from({ length: 60 }, (_, i) => {
      const t = (i + 1) * 60;
      return reading(t, i < 20 ? 40 + i : 60);
    });
    expect(memoryTrend(samples, 'heapMB', 2_400)).toMatchObject({
      mbPerHour: 0,
      points: 40,
      flat: true,
    });
    // Over the whole hour the warm-up shows as growth.
    expect(memoryTrend(samples, 'heapMB', 3_600)?.flat).toBe(false);
  });

  it('calls a steady leak growing, and noise around a flat line flat', () => {
    const leak = Array.from({ length: 40 }, (_, i) => reading(i * 60, 50 + (i * 10) / 60));
    expect(memoryTrend(leak, 'heapMB', 2_400)).toMatchObject({ mbPerHour: 10, flat: false });
    // Alternating +-3 MB: the fitted slope is small beside its standard error.
    const noisy = Array.from({ length: 40 }, (_, i) => reading(i * 60, 50 + (i % 2 ? 3 : -3)));
    const trend = memoryTrend(noisy, 'heapMB', 2_400);
    expect(trend?.flat).toBe(true);
    expect(Math.abs(trend?.mbPerHour ?? 99)).toBeLessThan(FLAT_TOLERANCE_MB_PER_HOUR * 2);
  });

  it('skips readings without the figure and needs three', () => {
    const samples = [reading(60, 50), reading(120, undefined), reading(180, 50)];
    expect(memoryTrend(samples, 'heapMB', 2_400)).toBeUndefined();
    expect(memoryTrend(samples, 'rssMB', 2_400)?.points).toBe(3);
  });
});

describe('soakVerdict', () => {
  const flat = { mbPerHour: 0.5, stdErrorMbPerHour: 0.2, points: 40, flat: true };
  it('passes only with a flat heap, nothing lost and nothing duplicated', () => {
    expect(soakVerdict(flat, 0, 0).pass).toBe(true);
    expect(soakVerdict(flat, 1, 0).pass).toBe(false);
    expect(soakVerdict(flat, 0, 1).pass).toBe(false);
    expect(soakVerdict({ ...flat, flat: false }, 0, 0).pass).toBe(false);
    expect(soakVerdict(undefined, 0, 0)).toMatchObject({ pass: false, heapFlat: false });
  });
});
