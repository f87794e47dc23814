import type { RunResult } from '../scenarios/result';
import { withExportedSpans } from './exported-spans';
import { LADDER_RUNGS, samplingRatio } from './rungs';

/** Only the fields withExportedSpans reads. */
function run(ok = true): RunResult {
  return { ok, extra: { round: 1, rung: 'tracing-100' } } as unknown as RunResult;
}

const counts = (spans: number) => ({ spans, exports: spans > 0 ? 1 : 0, bytes: spans * 700 });

describe('withExportedSpans', () => {
  it('adds what the sink received to the run', () => {
    const out = withExportedSpans(run(), counts(980), 1, 1_000);
    expect(out.ok).toBe(true);
    expect(out.extra).toEqual({
      round: 1,
      rung: 'tracing-100',
      otlpSpans: 980,
      otlpExports: 1,
      otlpBytes: 686_000,
    });
  });

  it('fails a rung that exported nothing where its sampling made spans certain: tracing never ran', () => {
    const out = withExportedSpans(run(), counts(0), 1, 1_000);
    expect(out).toMatchObject({ ok: false, error: expect.stringContaining('no spans') });
    // 1 % of 2,000 publishes: 20 expected, none is not chance.
    expect(withExportedSpans(run(), counts(0), 0.01, 2_000).ok).toBe(false);
  });

  it('accepts no span where sampling may well have picked none, and keeps an earlier failure', () => {
    expect(withExportedSpans(run(), counts(0), 0.01, 500).ok).toBe(true);
    const failed = { ...run(false), error: 'connect refused' };
    expect(withExportedSpans(failed, counts(0), 1, 1_000).error).toBe('connect refused');
  });
});

describe('samplingRatio', () => {
  it("reads each tracing rung's OTEL_TRACES_SAMPLER_ARG", () => {
    const ratios = LADDER_RUNGS.filter((r) => r.exportsSpans).map((r) => [r.id, samplingRatio(r)]);
    expect(ratios).toEqual([
      ['tracing-1', 0.01],
      ['tracing-100', 1],
    ]);
  });
});
