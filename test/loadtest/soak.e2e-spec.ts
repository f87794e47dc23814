import { existsSync } from 'node:fs';
import { markdownReport } from '../../loadtest/src/report/markdown';
import { SERVICE_ENTRY } from '../../loadtest/src/service/launcher';
import { SOAK_TRANSPORTS } from '../../loadtest/src/soak/soak-plan';
import { runSuite } from '../../loadtest/src/suite';

/** A minute of soak plus the service's start and the drain. */
const SOAK_SMOKE_TIMEOUT_MS = 150_000;

/**
 * The soak scenario at CI size (`--tiny`: 60 s, 40 subscribers over 10 orders on every
 * soak transport, every churn several times over) against the built service: nothing
 * lost or duplicated on any transport through stream ends, gRPC connection recycling,
 * token expiry with renewal and client drops, and the report carries its readings and
 * slopes. The memory verdict itself needs the hour (a minute is all warm-up).
 */
describe('load test soak, CI size', () => {
  jest.setTimeout(SOAK_SMOKE_TIMEOUT_MS);

  it('loses and duplicates nothing through every churn and reports memory every reading', async () => {
    if (!existsSync(SERVICE_ENTRY)) {
      throw new Error(`${SERVICE_ENTRY} is missing: run \`npm run build\` first`);
    }
    const report = await runSuite({
      steps: [{ scenario: 'soak', options: {} }],
      transports: [...SOAK_TRANSPORTS],
      overrides: {},
      tiny: true,
      argv: ['soak', '--tiny'],
      progress: () => undefined,
    });
    expect(report.runs.map((r) => r.transport)).toEqual([...SOAK_TRANSPORTS]);
    for (const r of report.runs) {
      const where = `soak ${r.transport}`;
      expect({
        where,
        ok: r.ok,
        error: r.error,
        lost: r.events.lost,
        dup: r.events.duplicates,
        ooo: r.events.outOfOrder,
        delivered: r.events.delivered > 0 && r.events.delivered === r.events.expected,
        // Every transport's streams were ended or dropped and resumed.
        resumed: r.reconnectMs.count > 0,
        forced: (r.ends.client_forced ?? 0) > 0,
      }).toEqual({
        where,
        ok: true,
        error: undefined,
        lost: 0,
        dup: 0,
        ooo: 0,
        delivered: true,
        resumed: true,
        forced: true,
      });
    }
    // The service's own churn reached the streaming transports: maximum age on each, and
    // token expiry (SSE and socket.io say `token_expired`; long-poll's next poll is 401).
    const byTransport = new Map(report.runs.map((r) => [r.transport, r]));
    for (const t of ['grpc', 'sse', 'ws'] as const)
      expect({ t, maxAge: (byTransport.get(t)?.ends.max_age ?? 0) > 0 }).toEqual({
        t,
        maxAge: true,
      });
    expect(byTransport.get('sse')?.ends.token_expired).toBeGreaterThan(0);
    expect(byTransport.get('longpoll')?.errors.http_401).toBeGreaterThan(0);

    const soak = report.runs[0].soak;
    expect(soak).toBeDefined();
    if (soak === undefined) return;
    // A reading every 10 s of the minute, each with the heap after GC and the loop delay.
    expect(soak.samples.map((s) => s.tS)).toEqual([10, 20, 30, 40, 50, 60]);
    for (const s of soak.samples) {
      expect({
        t: s.tS,
        heap: typeof s.heapMB,
        rss: s.rssMB > 0,
        loop: typeof s.loopP99Ms,
      }).toEqual({ t: s.tS, heap: 'number', rss: true, loop: 'number' });
    }
    expect(soak.heap?.points).toBe(6);
    expect(typeof soak.rss?.mbPerHour).toBe('number');
    expect(soak.publishes.rest.ok).toBeGreaterThan(0);
    expect(soak.publishes.grpc.ok).toBeGreaterThan(0);
    // Failed attempts are retried with the same idempotency key; none may fail them all.
    expect({
      failed: soak.publishes.rest.failed + soak.publishes.grpc.failed,
      errors: soak.publishErrors,
    }).toEqual({ failed: 0, errors: expect.any(Array) });
    expect(soak.tokenRenewals).toBeGreaterThan(0);
    expect(soak.verdict).toMatchObject({ lost: 0, duplicates: 0 });
    const md = markdownReport(report);
    expect(md).toContain('## soak');
    expect(md).toContain('**Verdict: ');
    expect(md).toContain('| t s | heap MB after GC |');
  });
});
