import { readFileSync } from 'node:fs';
import { canPin } from './service/launcher';
import { runSuite } from './suite';

/** This process's CPU affinity as the kernel lists it (`0-1`). */
const affinity = (): string | undefined =>
  /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];

describe('runSuite', () => {
  // A suite pins the generator (this process) to one core. Run from a test runner's worker
  // (the load test smoke's hostile and failover runs), the pin outlived the suite: every
  // later test in that worker, and every service and browser it started, shared one core
  // of two.
  (canPin() ? it : it.skip)('leaves the calling process on the cores it had', async () => {
    const before = affinity();
    const report = await runSuite({
      steps: [],
      transports: ['sse'],
      overrides: {},
      argv: [],
      progress: () => undefined,
    });
    expect(report.settings.pinned).toBe(true);
    expect(affinity()).toBe(before);
  });
});
