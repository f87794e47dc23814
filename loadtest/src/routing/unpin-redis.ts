import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * The generator pins itself to one core and the processes it starts inherit that: a
 * private Redis (or cluster node) gets every core back, as a Redis server on its own
 * would have. Best effort: without taskset or redis-cli Redis stays where it started.
 */
export function unpinRedis(ports: readonly number[]): void {
  const all = `0-${availableParallelism() - 1}`;
  for (const port of ports) {
    try {
      const info = execFileSync('redis-cli', ['-p', String(port), 'info', 'server'], {
        encoding: 'utf8',
      });
      const pid = /process_id:(\d+)/.exec(info)?.[1];
      if (pid !== undefined) execFileSync('taskset', ['-a', '-cp', all, pid], { stdio: 'ignore' });
    } catch {
      // The report's host figures show where Redis ran.
    }
  }
}
