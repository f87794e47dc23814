import type { RunResult } from '../scenarios/result';
import { comparisonTable, serverComparisons } from './comparison';

/** Only the fields serverComparisons reads. */
function run(
  server: 'nest' | 'bare' | 'fastify' | 'floor' | 'nchan',
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

  it('splits long-poll over bare Node into Fastify, Nest on Fastify and the service, per round', () => {
    // Per round: Fastify 1.1x bare, Nest floor 1.2x Fastify, service 1.25x the Nest floor;
    // round 2 ran on a host at half speed.
    const lp = (...args: Parameters<typeof run>): RunResult => ({
      ...run(...args),
      transport: 'longpoll',
    });
    const runs = [
      lp('nest', 1, 165),
      lp('bare', 1, 100),
      lp('fastify', 1, 110),
      lp('floor', 1, 132),
      lp('nest', 2, 330),
      lp('bare', 2, 200),
      lp('fastify', 2, 220),
      lp('floor', 2, 264),
      lp('nest', 3, 165, 24000),
      lp('bare', 3, 100, 9000),
      lp('fastify', 3, 110, 12000),
      lp('floor', 3, 132, 17000),
    ];
    const [c] = serverComparisons(runs);
    expect(c.rounds.floor).toEqual([132, 264, 132]);
    expect(c.rounds.fastify).toEqual([110, 220, 110]);
    expect(c.overBarePaired).toBe(1.65);
    expect(c.fastifyOverBarePaired).toBe(1.1);
    expect(c.floorOverFastifyPaired).toBe(1.2);
    expect(c.overFloorPaired).toBe(1.25);
    expect(c.floorOverBarePaired).toBe(1.32);
    const row = comparisonTable([c])[2];
    expect(row).toContain(
      '| 165 / 330 / 165 | 100 / 200 / 100 | 110 / 220 / 110 | 132 / 264 / 132 | - |',
    );
    expect(row).toContain('| <= 1.25 | 1.1, 1.2, 1.25; 1.32 |');
    expect(row).toContain('24000 / 9000 (2.67); fastify 12000; nest floor 17000');
    // Without the floors (the streamed transports) the column stays empty.
    const [bareOnly] = serverComparisons(
      runs.filter((r) => r.server === 'nest' || r.server === 'bare'),
    );
    expect(bareOnly.overFloorPaired).toBeUndefined();
    expect(comparisonTable([bareOnly])[2]).toContain('| <= 1.25 | - |');
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
