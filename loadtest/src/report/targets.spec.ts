import type { RunResult } from '../scenarios/result';
import { median, targetChecks } from './targets';

/** Only the fields targetChecks reads. */
function overheadRun(server: 'nest' | 'bare', cpuMsPer1kEvents: number): RunResult {
  return {
    scenario: 'overhead',
    transport: 'sse',
    server,
    service: { cpuMsPer1kEvents },
  } as unknown as RunResult;
}

describe('targetChecks', () => {
  it('judges Nest over bare on the medians of the rounds, not on one pair', () => {
    // Round 2 alone would read +100 %; the medians (20 vs 16) read +25 %.
    const runs = [
      overheadRun('nest', 20),
      overheadRun('bare', 16),
      overheadRun('nest', 28),
      overheadRun('bare', 14),
      overheadRun('nest', 19),
      overheadRun('bare', 17),
    ];
    const [check] = targetChecks(runs);
    expect(check).toEqual({
      target: 'sse: Nest CPU per event over a bare server',
      required: '<= +25 %',
      measured: '+25 % (20 vs 16 ms/1k ev, medians of 3 rounds)',
      reached: true,
    });
  });

  it('reads a single pair as it is', () => {
    const [check] = targetChecks([overheadRun('nest', 13), overheadRun('bare', 10)]);
    expect(check.measured).toBe('+30 % (13 vs 10 ms/1k ev)');
    expect(check.reached).toBe(false);
  });
});

describe('median', () => {
  it('takes the middle value, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});

describe('targetChecks on scale steps', () => {
  function scaleStep(subscribers: number, clean: boolean, limit?: string): RunResult {
    return {
      scenario: 'scale',
      transport: 'sse',
      settings: { subscribers },
      generator: { saturated: false },
      extra: { clean, ...(limit === undefined ? {} : { limit }) },
    } as unknown as RunResult;
  }

  it('reports the highest clean step and which side ran out at the next one', () => {
    const [check] = targetChecks([
      scaleStep(3000, true, 'none'),
      scaleStep(4000, true, 'none'),
      scaleStep(5000, false, 'service'),
    ]);
    expect(check).toEqual({
      target: 'sse: subscribers at 10 ev/s, zero loss, p99 <= 50 ms',
      required: '5000',
      measured: '4000 (at 5000: limit service)',
      reached: false,
    });
  });

  it('reaches the target when the last step is clean', () => {
    const [check] = targetChecks([scaleStep(4000, true, 'none'), scaleStep(5000, true, 'none')]);
    expect(check.measured).toBe('5000');
    expect(check.reached).toBe(true);
  });
});
