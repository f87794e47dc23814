import type { RunResult } from '../scenarios/result';
import { note, SERVER_CORE_NOTE_PCT } from './table';

/** Only the fields the note reads. */
function run(serviceCpu: number, coreBusy?: number): RunResult {
  return {
    ok: true,
    scenario: 'steady',
    settings: {},
    service: { cpuPctAvg: serviceCpu },
    generator: { cpuPctAvg: 30, saturated: false },
    ...(coreBusy === undefined
      ? {}
      : {
          host: {
            cpuPctAvg: 0,
            otherCpuPctAvg: 0,
            busy: false,
            serverCore: { core: 1, busyPct: coreBusy, softirqPct: 0 },
          },
        }),
  } as unknown as RunResult;
}

describe('note: the server core', () => {
  it('names a server core busier than the server by the margin or more', () => {
    expect(note(run(60, 60 + SERVER_CORE_NOTE_PCT))).toBe("server's core 70% busy");
  });

  it('says nothing when the core read like the process, or was not read', () => {
    expect(note(run(60, 60 + SERVER_CORE_NOTE_PCT - 1))).toBe('');
    expect(note(run(60))).toBe('');
  });
});
