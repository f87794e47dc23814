import type { RunResult } from '../scenarios/result';
import type { OtlpCounts } from './otlp-sink';

/**
 * Sampled publishes a run must have made before exporting none means tracing was off: at
 * 20 expected, sampling alone leaves none with a probability of e^-20.
 */
const SAMPLED_BEFORE_SILENCE_FAILS = 20;

/**
 * A tracing rung's run with what the sink received (warm-up included) in its figures. A
 * rung whose service exported no span though `ratio` of its publishes (`publishes`, in the
 * measured window) should have been sampled measured no tracing, whatever its label says:
 * the run fails, so the report shows an error instead of a figure for a layer that never ran.
 */
export function withExportedSpans(
  run: RunResult,
  otlp: OtlpCounts,
  ratio: number,
  publishes: number,
): RunResult {
  const extra = {
    ...run.extra,
    otlpSpans: otlp.spans,
    otlpExports: otlp.exports,
    otlpBytes: otlp.bytes,
  };
  const silent = otlp.spans === 0 && publishes * ratio >= SAMPLED_BEFORE_SILENCE_FAILS;
  if (!silent || !run.ok) return { ...run, extra };
  return {
    ...run,
    extra,
    ok: false,
    error: 'the service exported no spans: tracing did not run (its publishes were not traced)',
  };
}
