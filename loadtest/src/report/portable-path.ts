import { basename, isAbsolute, relative, resolve, sep } from 'node:path';

/** The repository the load test belongs to. */
export const REPO_ROOT = resolve(__dirname, '../../..');

/**
 * A path as a results file records it: relative to the repository when inside it, the
 * file's name alone when outside (a machine's directories mean nothing on another one).
 */
export function portablePath(path: string, root: string = REPO_ROOT): string {
  if (!isAbsolute(path)) return path;
  const rel = relative(root, path);
  if (rel === '') return '.';
  if (rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) return basename(path);
  return rel.split(sep).join('/');
}

/** A command line with every absolute path in it (`/x/y`, `--opt=/x/y`) made portable. */
export function portableArgv(argv: readonly string[], root: string = REPO_ROOT): string[] {
  return argv.map((arg) => {
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    if (eq > 0) {
      const value = arg.slice(eq + 1);
      return isAbsolute(value) ? `${arg.slice(0, eq + 1)}${portablePath(value, root)}` : arg;
    }
    return isAbsolute(arg) ? portablePath(arg, root) : arg;
  });
}
