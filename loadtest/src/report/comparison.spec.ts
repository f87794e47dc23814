import type { RunResult } from '../scenarios/result';
import { comparisonTable, serverComparisons } from './comparison';

/** Only the fields serverComparisons reads. */
function run(
  server: 'nest' | 'bare' | 'nchan',
  round: number,
  cpuMsPer1kEvents: number,
  heapBytesPerEvent?: number | null,
): RunResult {
  return {
    scenario: 'overhead',
    transport: 'sse',
    server,
    ok: true,
    settings: { subscribers: 500 },
    service: { cpuMsPer1kEvents, heapBytesPerEvent },
    generator: { saturated: false },
    extra: { round },
  } as unknown as RunResult;
}

describe('serverComparisons', () => {
  it('reads service over bare within each round too, so a host that changes speed between rounds cancels out', () => {
    // The VM ran at half speed in rounds 1-2: every figure doubled, the ratio in each
    // round stayed 1.2. The medians (30 vs 20) read 1.5.
    const runs = [
      run('nest', 1, 48),
      run('bare', 1, 40),
      run('nest', 2, 30),
      run('bare', 2, 25),
      run('nest', 3, 24),
      run('bare', 3, 20),
      run('nest', 4, 12),
      run('bare', 4, 10),
      run('nest', 5, 30),
      run('bare', 5, 20),
    ];
    const [c] = serverComparisons(runs);
    expect(c.medians).toEqual({ nest: 30, bare: 20 });
    expect(c.overBare).toBe(1.5);
    expect(c.overBarePerRound).toEqual([1.2, 1.2, 1.2, 1.2, 1.5]);
    expect(c.overBarePaired).toBe(1.2);
    expect(comparisonTable([c])[2]).toContain('| 1.5 | 1.2 (1.2 / 1.2 / 1.2 / 1.2 / 1.5) |');
  });

  it('pairs by round, leaving out a round where one server has no figure', () => {
    const runs = [run('nest', 1, 11), run('bare', 1, 10), run('nest', 2, 30), run('bare', 3, 9)];
    const [c] = serverComparisons(runs);
    expect(c.overBarePerRound).toEqual([1.1]);
    expect(c.overBarePaired).toBe(1.1);
  });

  it('sets the heap bytes per delivery side by side where the runtime reports them', () => {
    const runs = [
      run('nest', 1, 48, 5200),
      run('bare', 1, 40, 2500),
      run('nest', 2, 30, 5000),
      run('bare', 2, 25, 2600),
      run('nest', 3, 24, 5100),
      run('bare', 3, 20, 2550),
      run('nchan', 1, 30, null),
    ];
    const [c] = serverComparisons(runs);
    expect(c.heapBytes).toEqual({ nest: 5100, bare: 2550 });
    expect(c.heapOverBare).toBe(2);
    expect(comparisonTable([c])[2]).toContain('| 5100 / 2550 (2) |');
  });

  it('shows no heap figure where the runtime does not report one (Node 20)', () => {
    const [c] = serverComparisons([run('nest', 1, 11, null), run('bare', 1, 10)]);
    expect(c.heapBytes).toEqual({});
    expect(c.heapOverBare).toBeUndefined();
    expect(comparisonTable([c])[2]).toContain('| - | 0 / 0 of 2 |');
  });
});
