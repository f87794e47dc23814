import { STACK_LOG_LINES_ON_FAILURE, withStackLog } from './cluster';
import type { RunResult } from './result';

const run = (ok: boolean, error?: string) => ({ ok, error }) as unknown as RunResult;

describe('withStackLog', () => {
  const log = Array.from({ length: 15 }, (_, i) => `[nginx] line ${i}`);

  it("ends a failed run's error with the stack's last lines", () => {
    const r = withStackLog(run(false, 'only 0/4 subscribers connected within 15000 ms'), log);
    const lines = r.error?.split('\n') ?? [];
    expect(lines[0]).toBe('only 0/4 subscribers connected within 15000 ms');
    expect(lines.slice(2)).toEqual(log.slice(-STACK_LOG_LINES_ON_FAILURE));
  });

  it('leaves a run that passed, or a stack that said nothing, as it was', () => {
    const passed = run(true);
    expect(withStackLog(passed, log)).toBe(passed);
    const failed = run(false, 'x');
    expect(withStackLog(failed, [])).toBe(failed);
  });
});
