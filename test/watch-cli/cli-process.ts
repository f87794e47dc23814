import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = join(__dirname, '..', '..');
const CLI = join(ROOT, 'apps', 'watch-cli', 'src', 'cli.ts');
const TSX = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');

export const CLI_TRANSPORTS = ['grpc', 'sse', 'ws', 'websocket', 'longpoll'] as const;
export type CliTransport = (typeof CLI_TRANSPORTS)[number];

/** `npm run watch` as a child process, its output collected line by line. */
export interface Watcher {
  readonly transport: string;
  readonly child: ChildProcess;
  /** stdout's lines, and stderr's prefixed with `stderr: `, in arrival order. */
  readonly lines: string[];
  /** The seqs printed as events, in order. */
  seqs(): number[];
}

/** Starts the CLI with `args` (the stream id among them); `env` over the test's own. */
export function spawnCli(
  transport: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Watcher {
  const child = spawn(process.execPath, [TSX, CLI, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
  createInterface({ input: child.stderr }).on('line', (l) => lines.push(`stderr: ${l}`));
  return {
    transport,
    child,
    lines,
    seqs: () => lines.flatMap((l) => /\s#(\d+)\s/.exec(l)?.slice(1, 2).map(Number) ?? []),
  };
}

/** Resolves once the CLI has exited (at once if it has). */
export function exited(w: Watcher): Promise<unknown> {
  return w.child.exitCode !== null
    ? Promise.resolve()
    : new Promise((r) => w.child.once('exit', r));
}

/** Stops every watcher still running (Ctrl-C, as a person would) and waits for it. */
export async function stopAll(watchers: Watcher[]): Promise<void> {
  for (const w of watchers.splice(0)) {
    if (w.child.exitCode === null && w.child.signalCode === null) {
      const done = exited(w);
      w.child.kill('SIGINT');
      await done;
    }
  }
}
