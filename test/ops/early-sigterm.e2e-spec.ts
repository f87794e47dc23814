import { spawnService } from './service-process';

/**
 * An orchestrator may stop an instance the moment it has started (a rollout that is
 * rolled back, a scale-down right after a scale-up). The service announces itself with
 * its "listening" line; from then on SIGTERM must mean a graceful shutdown, never the
 * signal's default (the process killed with its clients' streams cut, exit by signal).
 * The handler used to be installed after an await that followed that line: about one
 * start in five died of the signal here. Five starts, so the old code rarely passes.
 */
describe('SIGTERM right after start', () => {
  it.each([1, 2, 3, 4, 5])(
    'drains and exits 0 when SIGTERM follows the listening line (#%i)',
    async () => {
      const service = await spawnService({ SHUTDOWN_DRAIN_MS: '1000' });
      try {
        service.child.kill('SIGTERM');
        expect(await service.exited).toBe(0);
      } finally {
        service.kill();
      }
    },
  );
});
