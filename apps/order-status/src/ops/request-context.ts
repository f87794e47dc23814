import type { AppConfig } from '../config/app-config';

/**
 * Whether ordinary requests run in nestjs-pino's request context (an AsyncLocalStorage), so
 * that lines logged while handling one carry its id.
 *
 * The context is free where AsyncLocalStorage runs on AsyncContextFrame: Node 24 and later
 * by default, Node 22 and 23 with `--experimental-async-context-frame`. Before that (Node
 * 20, which the service still supports), the first `run()` turns promise hooks on for
 * every promise of the process for good, which makes every later request dearer. So by
 * default (`auto`) the context is used only where it costs nothing; `on` keeps it on any
 * runtime, `off` drops it everywhere. The request's own completion line carries its id
 * either way.
 */
export type RequestContextSetting = AppConfig['logRequestContext'];

/** Where the runtime's flags come from: the command line and NODE_OPTIONS. */
export function runtimeFlags(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): string[] {
  return [...execArgv, ...(nodeOptions ?? '').split(/\s+/).filter((f) => f !== '')];
}

/** True when this runtime's AsyncLocalStorage needs no promise hooks. */
export function asyncContextFrameEnabled(
  nodeVersion: string = process.versions.node,
  flags: readonly string[] = runtimeFlags(),
): boolean {
  const major = Number(/^v?(\d+)\./.exec(nodeVersion)?.[1] ?? NaN);
  if (major >= 24) return !flags.includes('--no-async-context-frame');
  if (major >= 22) return flags.includes('--experimental-async-context-frame');
  return false;
}

export function requestContextEnabled(
  setting: RequestContextSetting,
  frameEnabled: boolean = asyncContextFrameEnabled(),
): boolean {
  return setting === 'on' || (setting === 'auto' && frameEnabled);
}
