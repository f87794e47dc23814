import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  mkdtempSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

/**
 * A project outside the repository that installs the client library the way a team
 * does: `npm pack` in libs/client (its prepack builds dist/), then `npm install` of the
 * tarball. Offline and deterministic: the package has no dependencies of its own, and
 * its peers are linked from the repository's node_modules instead of being resolved
 * from the registry.
 */

const run = promisify(execFile);

export const ROOT = join(__dirname, '..', '..');
export const CLIENT_DIR = join(ROOT, 'libs', 'client');
export const PACKAGE_NAME = '@order-status/client';
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** `npm pack --json`'s answer for one package. */
export interface PackResult {
  readonly filename: string;
  readonly files: readonly { readonly path: string }[];
}

export interface Consumer {
  readonly dir: string;
  readonly pack: PackResult;
  /** The installed package's folder (node_modules/@order-status/client). */
  readonly installed: string;
  /** Links a package of the repository's node_modules into the consumer's. */
  link(name: string): void;
  write(file: string, text: string): string;
  /** `tsc -p <tsconfig>` in the consumer's folder: its exit code and output. */
  typecheck(tsconfig: string): Promise<{ code: number; output: string }>;
  remove(): void;
}

/** npm writes the lifecycle scripts' output before the JSON: the JSON is the last array. */
function parsePack(stdout: string): PackResult {
  const parsed = JSON.parse(stdout.slice(stdout.lastIndexOf('\n[') + 1)) as PackResult[];
  if (parsed.length !== 1) throw new Error(`npm pack: expected one package, got ${stdout}`);
  return parsed[0];
}

/** How long a pack waits for another one of the same checkout. */
const PACK_LOCK_WAIT_MS = 180_000;
/** A lock older than this was left by a killed run. */
const PACK_LOCK_STALE_MS = 600_000;

/**
 * Runs `fn` holding a lock on libs/client/dist: CI runs the suite on two Node versions at
 * once in one checkout, and a prepack that empties dist/ while the other run's `npm pack`
 * reads it would pack half a build. `mkdir` is atomic, so it is the lock.
 */
async function withPackLock<T>(fn: () => Promise<T>): Promise<T> {
  const id = createHash('sha256').update(CLIENT_DIR).digest('hex').slice(0, 12);
  const lock = join(tmpdir(), `order-status-client-pack-${id}.lock`);
  const deadline = Date.now() + PACK_LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > PACK_LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`${lock} held for ${PACK_LOCK_WAIT_MS} ms`);
      else await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export async function createConsumer(): Promise<Consumer> {
  const dir = mkdtempSync(join(tmpdir(), 'order-status-consumer-'));
  const npm = { cwd: dir, maxBuffer: 16 * 1024 * 1024 };
  const packed = await withPackLock(() =>
    run('npm', ['pack', '--json', '--pack-destination', dir], { ...npm, cwd: CLIENT_DIR }),
  );
  const pack = parsePack(packed.stdout);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  // --legacy-peer-deps: the peers are linked below, not fetched.
  await run(
    'npm',
    [
      'install',
      '--offline',
      '--legacy-peer-deps',
      '--no-audit',
      '--no-fund',
      join(dir, pack.filename),
    ],
    npm,
  );
  const modules = join(dir, 'node_modules');
  return {
    dir,
    pack,
    installed: join(modules, PACKAGE_NAME),
    link(name) {
      const target = join(modules, name);
      mkdirSync(dirname(target), { recursive: true });
      symlinkSync(realpathSync(join(ROOT, 'node_modules', name)), target, 'dir');
    },
    write(file, text) {
      const path = join(dir, file);
      writeFileSync(path, text);
      return path;
    },
    async typecheck(tsconfig) {
      try {
        const r = await run(process.execPath, [TSC, '-p', tsconfig], npm);
        return { code: 0, output: r.stdout };
      } catch (err) {
        const e = err as { code?: number; stdout?: string };
        return { code: e.code ?? -1, output: e.stdout ?? String(err) };
      }
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The ```js blocks of a Markdown file, in order. */
export function jsBlocks(markdownPath: string): string[] {
  const text = readFileSync(markdownPath, 'utf8');
  return [...text.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

/** A Node process of the consumer, its output lines collected. */
export interface NodeRun {
  readonly child: ChildProcess;
  readonly stdout: string[];
  readonly stderr: string[];
  readonly exited: Promise<number | null>;
}

export function runNode(cwd: string, script: string, env: Record<string, string>): NodeRun {
  const child = spawn(process.execPath, [script], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => stdout.push(l));
  createInterface({ input: child.stderr }).on('line', (l) => stderr.push(l));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, stdout, stderr, exited };
}
