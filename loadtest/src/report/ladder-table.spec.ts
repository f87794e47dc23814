import type { RunResult } from '../scenarios/result';
import { ladderChart, ladderLines, ladderSteps } from './ladder-table';

/** Only the fields ladderSteps reads. */
function run(transport: string, rung: string, round: number, us: number, reqPerSec = 0): RunResult {
  return {
    scenario: 'ladder',
    transport,
    server: 'nest',
    ok: true,
    latency: { p99Ms: us / 10 },
    events: { perSec: 100 },
    requestsPerSec: reqPerSec,
    service: { cpuMsPer1kEvents: us, heapBytesPerEvent: null },
    generator: { saturated: false },
    extra: { round, rung },
  } as unknown as RunResult;
}

describe('ladderSteps', () => {
  it('prices each rung over the one below it within a round, so a host that slows between rounds cancels out', () => {
    // Round 2 ran at half speed: every figure doubled, auth still added 10 % in each.
    const runs = [
      run('sse', 'bare', 1, 20),
      run('sse', 'service', 1, 30),
      run('sse', 'auth', 1, 33),
      run('sse', 'bare', 2, 40),
      run('sse', 'service', 2, 60),
      run('sse', 'auth', 2, 66),
      run('sse', 'bare', 3, 20),
      run('sse', 'service', 3, 30),
      run('sse', 'auth', 3, 33),
    ];
    const steps = ladderSteps(runs);
    const auth = steps.find((s) => s.rung.id === 'auth');
    expect(auth).toMatchObject({ rounds: 3, usPerDelivery: 33, marginalUs: 3, marginalPct: 10 });
    expect(steps.find((s) => s.rung.id === 'service')?.marginalPct).toBe(50);
    // Streams have no framework floors; rungs that did not run have no figure and are not a base.
    expect(steps.map((s) => s.rung.id)).not.toContain('fastify');
    expect(steps.find((s) => s.rung.id === 'metrics')).toMatchObject({
      rounds: 0,
      usPerDelivery: undefined,
      marginalUs: undefined,
    });
  });

  it('gives long-poll its cost per request, and lists the tracing rungs, which run in this build', () => {
    const runs = [run('longpoll', 'bare', 1, 100, 50), run('longpoll', 'fastify', 1, 110, 50)];
    const fastify = ladderSteps(runs).find((s) => s.rung.id === 'fastify');
    // 110 µs per delivery, 100 deliveries and 50 requests a second: 220 µs per request,
    // and long-poll's marginal cost is per request (its events per answer vary).
    expect(fastify).toMatchObject({ usPerRequest: 220, marginalUs: 20, marginalPct: 10 });
    const lines = ladderLines(runs);
    expect(lines.filter((l) => l.includes('not available in this build'))).toEqual([]);
    for (const label of ['+ tracing 1 %', '+ tracing 100 %']) {
      expect(lines.filter((l) => l.includes(`| ${label} |`))).toHaveLength(1);
    }
    const chart = ladderChart(runs)[0]?.config as { data: { labels: string[] } };
    expect(chart.data.labels).toEqual(['bare Node', 'Fastify']);
  });
});
