import { existsSync } from 'node:fs';
import { bareServerCommand } from '../../loadtest/src/bare/bare-command';
import {
  launchService,
  SERVICE_ENTRY,
  type RunningService,
} from '../../loadtest/src/service/launcher';
import { DEFAULT_SUITE, runSuite } from '../../loadtest/src/suite';
import { markdownReport } from '../../loadtest/src/report/markdown';
import { htmlReport } from '../../loadtest/src/report/html';
import type { TransportName } from '../../loadtest/src/clients/transport';

/**
 * Every scenario at tiny size (seconds each) against the bare server, which speaks the
 * service's wire format, and against the built service when dist/ has it. Asserts a
 * complete report and no loss, duplicates or reordering anywhere.
 */
const SMOKE_TRANSPORTS: TransportName[] = [
  'grpc',
  'sse',
  'sse-h2',
  'ws',
  'longpoll',
  'longpoll-h2',
  'shortpoll',
];

describe('load test smoke', () => {
  jest.setTimeout(170_000);

  const servers: ('bare' | 'nest')[] =
    existsSync(SERVICE_ENTRY) && process.env.LOADTEST_SMOKE_NEST === '1' ? ['nest'] : ['bare'];

  let running: RunningService | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });

  it.each(servers)('runs every scenario tiny against the %s server', async (server) => {
    // One server for the whole suite: runs use distinct order ids, and a start per run
    // would cost more than the runs themselves.
    running = await launchService(server === 'bare' ? { command: bareServerCommand('sse') } : {});
    const report = await runSuite({
      running,
      steps: DEFAULT_SUITE.map((s) => ({
        ...s,
        options: { transports: ['grpc', 'sse', 'ws', 'longpoll'] },
      })),
      transports: SMOKE_TRANSPORTS,
      overrides: {},
      tiny: true,
      server,
      argv: ['--tiny'],
      progress: () => undefined,
    });
    const scenarios = new Set(report.runs.map((r) => r.scenario));
    const expected = DEFAULT_SUITE.map((s) => s.scenario).filter(
      (s) => server === 'nest' || s !== 'reconnect',
    );
    for (const s of expected) expect(scenarios).toContain(s);
    for (const r of report.runs) {
      const where = `${r.scenario} ${r.variant} ${r.transport}`;
      expect({ where, ok: r.ok, error: r.error }).toEqual({ where, ok: true, error: undefined });
      expect({
        where,
        lost: r.events.lost,
        dup: r.events.duplicates,
        ooo: r.events.outOfOrder,
      }).toEqual({
        where,
        lost: 0,
        dup: 0,
        ooo: 0,
      });
    }
    expect(markdownReport(report)).toContain('## steady');
    expect(htmlReport(report)).toContain('new Chart(');
  });
});
